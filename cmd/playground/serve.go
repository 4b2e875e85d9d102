package main

import (
	"context"
	"errors"
	"io"
)

func serveCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	return errors.New("serve: the web playground is not part of this build yet; use 'playground run' or 'playground list'")
}
