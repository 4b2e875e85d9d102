package maekawa

import (
	"fmt"
	"slices"
)

// Constructions of the voting sets, chosen with params.construction when params.sets
// is left out.
const (
	// Plane builds sets of about sqrt(N) members from a finite projective plane.
	Plane = "plane"
	// Grid is the row and column of a square grid, about 2 sqrt(N) members: the
	// construction of note 003's 36-process example, and the default before epoch 2.
	Grid = "grid"
)

// notes3 and notes7 are the voting sets the course notes (002) give for N=3 and N=7, for
// processes 1..N, written by position: the notes' p_k is node index k-1, which has id k
// under the default ids 1..N.
var (
	notes3 = [][]int{{0, 1}, {1, 2}, {0, 2}} // V1 = {1, 2}, V2 = {2, 3}, V3 = {1, 3}
	notes7 = [][]int{
		{0, 1, 2}, // V1 = {1, 2, 3}
		{1, 3, 5}, // V2 = {2, 4, 6}
		{2, 4, 5}, // V3 = {3, 5, 6}
		{0, 3, 4}, // V4 = {1, 4, 5}
		{1, 4, 6}, // V5 = {2, 5, 7}
		{0, 5, 6}, // V6 = {1, 6, 7}
		{2, 3, 6}, // V7 = {3, 4, 7}
	}
)

// Sets are a run's voting sets, by node index, with what built them.
type Sets struct {
	Sets [][]int // node index -> its voting set as ascending node indexes
	// About names the construction and its K, in words a page or a test can show.
	About string
}

// Build returns the voting sets of n nodes by construction how (Plane or Grid). Both
// give the notes' sets for N=3 and N=7: the notes fix them, and they are the projective
// planes of orders 1 and 2.
//
// Plane: for N = q²+q+1 with q prime (13, 31, 57 ...), the lines of the projective plane
// of order q: K = q+1, every process in K sets, every two sets sharing exactly one
// process, the optimum the notes ask for. For any other N, the largest such plane (the
// notes' N=3 or N=7 sets below 13) on the first q²+q+1 processes, and each process
// beyond it asks one of the plane's lines plus itself (K = q+2 for those): every two
// sets still meet, since any two lines do, at about sqrt(N) members; the processes
// beyond the plane vote only for themselves, so the notes' equal-responsibility
// property holds only when N is a plane's size.
//
// Grid: the nodes row by row on c = ceil(sqrt(n)) columns; a set is its row plus its
// column. Node i's row crosses node j's column, and when that cell is empty (i sits in
// the short last row) j's row crosses i's column, never empty as every row but the last
// is full. When n fills the grid (4, 9, 16, 36 ...) K = 2 sqrt(N) - 1.
func Build(n int, how string) Sets {
	switch n {
	case 3:
		return Sets{cloneSets(notes3), "the notes' sets for N=3: K=2"}
	case 7:
		return Sets{cloneSets(notes7), "the notes' sets for N=7 (the projective plane of order 2): K=3"}
	}
	if how == Grid || n < 3 {
		return grid(n)
	}
	return extendedPlane(n)
}

// DefaultSets returns the default construction's sets for n nodes.
func DefaultSets(n int) [][]int { return Build(n, Plane).Sets }

func grid(n int) Sets {
	c := 1
	for c*c < n {
		c++
	}
	rows := (n + c - 1) / c
	sets := make([][]int, n)
	for i := range sets {
		for j := 0; j < n; j++ {
			if j/c == i/c || j%c == i%c {
				sets[i] = append(sets[i], j)
			}
		}
	}
	about := fmt.Sprintf("a grid of %d rows by %d columns, a set being a row plus a column: K=%d", rows, c, rows+c-1)
	if rows*c != n {
		lo, hi := sizeRange(sets)
		about = fmt.Sprintf("a grid of %d columns with a short last row, a set being a row plus a column: K from %d to %d", c, lo, hi)
	}
	return Sets{sets, about}
}

// extendedPlane is the plane construction for n >= 4 (see Build).
func extendedPlane(n int) Sets {
	q, base := 1, cloneSets(notes3)
	for _, o := range []int{2, 3, 5, 7, 11, 13, 17, 19, 23} {
		if o*o+o+1 > n {
			break
		}
		q, base = o, planeLines(o)
	}
	if q == 2 {
		base = cloneSets(notes7)
	}
	p := len(base)
	var name string
	switch q {
	case 1:
		name = "the notes' sets for N=3"
	case 2:
		name = "the notes' sets for N=7 (the projective plane of order 2)"
	default:
		name = fmt.Sprintf("the projective plane of order %d", q)
	}
	if p == n {
		return Sets{base, fmt.Sprintf("%s: K=%d", name, q+1)}
	}
	sets := base
	for i := p; i < n; i++ {
		sets = append(sets, append(slices.Clone(base[(i-p)%p]), i))
	}
	return Sets{sets, fmt.Sprintf("%s on the first %d processes (K=%d); each of the other %d asks one of its lines plus itself (K=%d)",
		name, p, q+1, n-p, q+2)}
}

// planeLines returns the lines of the projective plane of prime order q on points
// 0..q²+q, numbered so that point i lies on line i: line i is D+i (mod q²+q+1) for a
// Singer perfect difference set D, which contains 0.
//
// Singer: take a cubic f over GF(q) of which x is a primitive root, so that the powers
// x^0 .. x^(q³-2) are every non-zero element of GF(q³) = GF(q)[x]/f. The points of the
// plane are the powers x^0 .. x^(P-1), P = q²+q+1 (x^P lies in GF(q), so later powers
// repeat the same points); the elements with no x² term form a plane through the
// origin, a line, and D is the set of exponents of its points. Multiplying by x^i maps
// lines to lines, so D+i is a line too.
func planeLines(q int) [][]int {
	f := primitiveCubic(q)
	p := q*q + q + 1
	var d []int
	v := [3]int{1, 0, 0}
	for i := 0; i < p; i++ {
		if v[2] == 0 {
			d = append(d, i)
		}
		v = mulX(v, f, q)
	}
	lines := make([][]int, p)
	for i := range lines {
		for _, e := range d {
			lines[i] = append(lines[i], (i+e)%p)
		}
		slices.Sort(lines[i])
	}
	return lines
}

// mulX multiplies v = v0 + v1 x + v2 x² by x modulo the monic cubic
// x³ + f[2] x² + f[1] x + f[0] over GF(q).
func mulX(v, f [3]int, q int) [3]int {
	hi := v[2]
	return [3]int{
		(q - hi*f[0]%q) % q,
		(v[0] + q - hi*f[1]%q) % q,
		(v[1] + q - hi*f[2]%q) % q,
	}
}

// primitiveCubic finds the first monic cubic over GF(q) (in a fixed order, so the
// plane is always numbered the same) of which x has order q³-1. Such an f is
// irreducible: x then has q³-1 distinct powers, so every non-zero residue is a unit.
func primitiveCubic(q int) [3]int {
	order := q*q*q - 1
	for c := 1; c < q; c++ {
		for b := 0; b < q; b++ {
			for a := 0; a < q; a++ {
				f := [3]int{c, b, a}
				v := [3]int{1, 0, 0}
				k := 1
				for ; k <= order; k++ {
					v = mulX(v, f, q)
					if v == [3]int{1, 0, 0} {
						break
					}
				}
				if k == order {
					return f
				}
			}
		}
	}
	panic(fmt.Sprintf("maekawa: no primitive cubic over GF(%d): %d is not prime", q, q))
}

func cloneSets(sets [][]int) [][]int {
	out := make([][]int, len(sets))
	for i, s := range sets {
		out[i] = slices.Clone(s)
	}
	return out
}

func sizeRange(sets [][]int) (lo, hi int) {
	lo = len(sets[0])
	for _, s := range sets {
		lo, hi = min(lo, len(s)), max(hi, len(s))
	}
	return lo, hi
}

// EqualSize reports whether every set has the same size K and every node is in exactly
// K sets (the notes' properties 2 and 3).
func EqualSize(sets [][]int) bool {
	if len(sets) == 0 {
		return true
	}
	k := len(sets[0])
	in := make([]int, len(sets))
	for _, s := range sets {
		if len(s) != k {
			return false
		}
		for _, j := range s {
			in[j]++
		}
	}
	for _, c := range in {
		if c != k {
			return false
		}
	}
	return true
}

// meanOthers is K-1 averaged over the default sets for n nodes: the messages each verb
// (REQUEST, REPLY, RELEASE) costs an entry without contention.
func meanOthers(n int) float64 { return meanOthersOf(DefaultSets(n)) }

// meanOthersIn is K-1 averaged over the sets a run's params give (its construction or
// its own sets), so a grid run is measured against the grid's K.
func meanOthersIn(params any, n int) float64 {
	p, ok := params.(Params)
	if !ok {
		return meanOthers(n)
	}
	return meanOthersOf(p.sets(n))
}

func meanOthersOf(sets [][]int) float64 {
	total := 0
	for _, s := range sets {
		total += len(s) - 1
	}
	return float64(total) / float64(len(sets))
}
