package arena

import (
	"log/slog"
	"time"
)

// Clock is now when it is set, else the wall clock: the rule of every
// component's optional Now field.
func Clock(now func() time.Time) func() time.Time {
	if now != nil {
		return now
	}
	return time.Now
}

// Logger is l when it is set, else the default logger: the rule of every
// component's optional Logger field.
func Logger(l *slog.Logger) *slog.Logger {
	if l != nil {
		return l
	}
	return slog.Default()
}
