//go:build ignore

// gen_compact_fields writes the browser's copy of the compact frames' field tables
// (protocol.CompactFieldsJS) to the file its argument names: go generate runs it.
package main

import (
	"log"
	"os"

	"github.com/teach-dist/playground/runtime/protocol"
)

func main() {
	if len(os.Args) != 2 {
		log.Fatal("usage: go run gen_compact_fields.go FILE")
	}
	if err := os.WriteFile(os.Args[1], protocol.CompactFieldsJS(), 0o644); err != nil {
		log.Fatal(err)
	}
}
