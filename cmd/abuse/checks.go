package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"time"

	"github.com/teach-dist/playground/cmd/internal/browser"
)

// A Check (the explorer) as the page's dialog runs it: a stream of JSON lines.

// checkLine is a line of a Check's stream, stamped when it came.
type checkLine struct {
	Type     string
	Position int
	Error    string
	Result   *struct{ Result, Bound string }
	at       time.Time
}

// checkStream posts the Check (the explorer) of session id as c; its lines come on
// the channel, which closes when the stream ends (ctx's end cancels the request, as
// the dialog's Cancel does).
func checkStream(ctx context.Context, c *browser.Client, id string) (<-chan checkLine, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.Base+"/api/sessions/"+id+"/explore", nil)
	if err != nil {
		return nil, err
	}
	resp, err := c.Do(req)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		resp.Body.Close()
		return nil, fmt.Errorf("explore: %d", resp.StatusCode)
	}
	lines := make(chan checkLine, 64)
	go func() {
		defer resp.Body.Close()
		defer close(lines)
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			var l checkLine
			if json.Unmarshal(sc.Bytes(), &l) == nil {
				l.at = time.Now()
				lines <- l
			}
		}
	}()
	return lines, nil
}

// checkUntil runs a Check until a line of type typ (or the stream's end).
func checkUntil(ctx context.Context, c *browser.Client, id, typ string) (checkLine, error) {
	lines, err := checkStream(ctx, c, id)
	if err != nil {
		return checkLine{}, err
	}
	return waitLine(lines, typ)
}

// waitLine reads lines until one of type typ, or an error line, or the end.
func waitLine(lines <-chan checkLine, typ string) (checkLine, error) {
	for l := range lines {
		if l.Type == typ {
			return l, nil
		}
		if l.Type == "error" {
			return l, fmt.Errorf("explore: %s", l.Error)
		}
	}
	return checkLine{}, fmt.Errorf("the stream ended before a %s line", typ)
}
