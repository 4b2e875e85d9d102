// Package importrules holds no code: its test keeps the house's import rules (README,
// "Layout"; ../shared/DESIGN.md), reading every package of the module through `go list`.
// A new package must state where it stands in the test's table, or the test fails.
package importrules
