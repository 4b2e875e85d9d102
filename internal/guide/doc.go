// Package guide holds no code: its test follows docs/adding-an-algorithm.md to the
// letter in a copy of the repository, adding the worked example kept in testdata/baton
// (its files, the page's diffs, the page's commands), and passes only if the page's
// done command passes there. A page that no longer adds an algorithm cleanly fails
// `make test`.
package guide
