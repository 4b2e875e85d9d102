package lecture

import (
	"strconv"
	"strings"

	"rsc.io/qr"
)

// QRSVG draws text as a QR code in SVG, black on white with the standard quiet zone of
// four modules, for a projector: medium error correction survives a glare spot. Each
// row's dark runs are one path segment, so the drawing stays small.
func QRSVG(text string) ([]byte, error) {
	c, err := qr.Encode(text, qr.M)
	if err != nil {
		return nil, err
	}
	const quiet = 4
	n := c.Size + 2*quiet
	var b strings.Builder
	size := strconv.Itoa(n)
	b.WriteString(`<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 ` + size + ` ` + size +
		`" shape-rendering="crispEdges" role="img" aria-label="QR code of the join link">`)
	b.WriteString(`<rect width="` + size + `" height="` + size + `" fill="#fff"/><path fill="#000" d="`)
	for y := 0; y < c.Size; y++ {
		for x := 0; x < c.Size; {
			if !c.Black(x, y) {
				x++
				continue
			}
			run := 1
			for x+run < c.Size && c.Black(x+run, y) {
				run++
			}
			b.WriteString("M" + strconv.Itoa(x+quiet) + " " + strconv.Itoa(y+quiet) +
				"h" + strconv.Itoa(run) + "v1h-" + strconv.Itoa(run) + "z")
			x += run
		}
	}
	b.WriteString(`"/></svg>`)
	return []byte(b.String()), nil
}
