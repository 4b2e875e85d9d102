// Package defaults fills in the options a caller left out: one definition of "zero,
// or a value that makes no sense, means the default" for every service's Options.
package defaults

// Positive sets *v to def unless *v is above zero: a count, a size or a duration
// left out (or negative) takes its default.
func Positive[T ~int | ~int64 | ~float64](v *T, def T) {
	if *v <= 0 {
		*v = def
	}
}
