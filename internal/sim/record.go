package sim

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/forecast-arena/arena"
)

// SettingKey is where a database records the world its sim markets come
// from, so that later commands (a second sync, `arena serve`) continue the
// same world instead of mixing two under the same market ids.
const SettingKey = "sim.world"

// Recorded returns the configuration of the world recorded in s, if any.
func Recorded(ctx context.Context, s arena.SettingStore) (Config, bool, error) {
	v, ok, err := s.Setting(ctx, SettingKey)
	if err != nil || !ok {
		return Config{}, false, err
	}
	var c Config
	if err := json.Unmarshal([]byte(v), &c); err != nil {
		return Config{}, false, fmt.Errorf("sim: recorded world %q: %w", v, err)
	}
	return c, true, nil
}

// Record stores the world's configuration in s. A database holds one
// world: recording a different one is refused, because its market ids
// would collide with the first one's.
func Record(ctx context.Context, s arena.SettingStore, w *World) error {
	cur, ok, err := Recorded(ctx, s)
	if err != nil {
		return err
	}
	c := w.Config()
	if ok {
		if !cur.Start.Equal(c.Start) || cur.withStart(time.Time{}) != c.withStart(time.Time{}) {
			named := ""
			if cur.Venues != "" {
				named = ", named after " + cur.Venues
			}
			return arena.Errorf(arena.ECONFLICT, "sim: this database holds the world of seed %d, %d markets, starting %s%s; sync it with those settings, or use another --db",
				cur.Seed, cur.Markets, cur.Start.Format(time.RFC3339), named)
		}
		return nil
	}
	b, err := json.Marshal(c)
	if err != nil {
		return fmt.Errorf("sim: encode world: %w", err)
	}
	return s.PutSetting(ctx, SettingKey, string(b))
}

// withStart returns c with Start replaced, so that configurations compare
// with == regardless of the location of their times.
func (c Config) withStart(t time.Time) Config { c.Start = t; return c }
