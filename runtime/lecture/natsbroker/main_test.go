package natsbroker

import (
	"testing"

	"go.uber.org/goleak"
)

// Every broker, mirror and server a test starts is gone when it ends.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
