// Package static holds the browser's assets (ES modules, CSS, icons), embedded in the
// binary. They are served under a prefix that is a hash of their content, so a page
// always loads the assets it was rendered with and browsers may cache them for good;
// module imports are relative and inherit the prefix.
//
// The modules, with no build step. Entry modules: theme.js (every page) and app.js
// (the playground), which makes the model, the connection and the stage and panels
// below, and hands each of them the page and every frame; each exports a create
// function and keeps its state in the object it returns.
//
//	dom.js         the DOM helpers: htmlEl, svgEl, byId, typing, noModifier
//	connection.js  the WebSocket: (re)connection, command refs
//	stage.js       drawing loop, controls, setup form (its params: setupform.js, pure);
//	               menus.js and keys.js beside it
//	view.js        the processes view; msglayer.js paints its moving messages on a
//	               canvas when dozens are in flight or the run plays at 4x and up
//	panels.js      pseudocode, inspector, log
//	network.js     Be the network; spacetime.js, metrics.js, lecture.js, explore.js,
//	               share.js, captions.js: the other panels
//	svgexport.js   SVG files for slides
//
// Pure (no DOM), unit-tested in test/ with node --test (make test-js): model.js (the
// client's copy of the run), causal.js (happened-before), layout.js (the view's
// geometry, the canvas layer's fit and hit test), timeline.js (the space-time diagram's data), clock.js (virtual time, how often the panels follow a fast run),
// netmodel.js (held messages, partitions), text.js (the page's words), setupform.js
// (Run setup's params and the /play query). The browser
// tests (web/e2e) cover the rest. ESLint (make check) lints them all.
package static

import (
	"bytes"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"io/fs"
	"mime"
	"net/http"
	"path"
	"slices"
	"strings"
	"time"
)

//go:embed *.js *.css *.svg
var files embed.FS

// Version is the content hash of every asset together.
var Version = hashAll()

// Prefix is the URL path under which Handler serves, with a trailing slash.
const Prefix = "/static/"

func hashAll() string {
	entries, err := fs.ReadDir(files, ".")
	if err != nil {
		panic(err)
	}
	names := make([]string, 0, len(entries))
	for _, e := range entries {
		names = append(names, e.Name())
	}
	slices.Sort(names)
	h := sha256.New()
	for _, n := range names {
		b, _ := files.ReadFile(n)
		h.Write([]byte(n))
		h.Write([]byte{0})
		h.Write(b)
		h.Write([]byte{0})
	}
	return hex.EncodeToString(h.Sum(nil))[:12]
}

// URL returns the versioned URL of an asset, e.g. URL("app.css").
func URL(name string) string { return Prefix + Version + "/" + name }

// Names lists the assets.
func Names() []string {
	entries, _ := fs.ReadDir(files, ".")
	out := make([]string, 0, len(entries))
	for _, e := range entries {
		out = append(out, e.Name())
	}
	return out
}

// Read returns an asset's content.
func Read(name string) ([]byte, error) { return files.ReadFile(name) }

// Handler serves GET Prefix + version + "/" + name. The current version is cached
// for a year as immutable; any other version (a page from before a restart) gets the
// current file, revalidated every time.
func Handler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rest := strings.TrimPrefix(r.URL.Path, Prefix)
		version, name, ok := strings.Cut(rest, "/")
		if !ok || name == "" || strings.Contains(name, "/") {
			http.NotFound(w, r)
			return
		}
		data, err := files.ReadFile(name)
		if err != nil {
			http.NotFound(w, r)
			return
		}
		if ct := mime.TypeByExtension(path.Ext(name)); ct != "" {
			w.Header().Set("Content-Type", ct)
		}
		if version == Version {
			w.Header().Set("Cache-Control", "public, max-age=31536000, immutable")
		} else {
			w.Header().Set("Cache-Control", "no-cache")
		}
		sum := sha256.Sum256(data)
		w.Header().Set("ETag", `"`+hex.EncodeToString(sum[:8])+`"`)
		http.ServeContent(w, r, name, time.Time{}, bytes.NewReader(data))
	})
}
