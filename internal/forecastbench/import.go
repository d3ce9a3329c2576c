package forecastbench

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/forecast-arena/arena"
)

// readFile opens path with open (nil: os.Open) and parses it with read;
// errors name the file and the position in it.
func readFile[T any](open func(string) (io.ReadCloser, error), path string, read func(io.Reader) (*T, error)) (*T, error) {
	if open == nil {
		open = func(p string) (io.ReadCloser, error) { return os.Open(p) }
	}
	f, err := open(path)
	if err != nil {
		return nil, arena.Errorf(arena.EINVALID, "forecastbench: %w", err)
	}
	defer f.Close()
	set, err := read(bufio.NewReaderSize(f, 64<<10))
	return set, fileErr(path, err)
}

func fileErr(path string, err error) error {
	if err == nil {
		return nil
	}
	var pe *ParseError
	if errors.As(err, &pe) {
		pe.File = path
		return arena.Errorf(arena.EINVALID, "forecastbench: %w", pe)
	}
	return fmt.Errorf("forecastbench: read %s: %w", path, err)
}

// Files lists the input files of one import.
type Files struct {
	Questions   []string
	Resolutions []string
	// Humans are files of individual human forecasts
	// (YYYY-MM-DD.ForecastBench.human_*_individual.json).
	Humans []string
	// Open opens each file (nil: os.Open); the command line's stops
	// reading when the command is interrupted.
	Open func(path string) (io.ReadCloser, error)
	// ReplaceEmpty admits a human forecast file that holds no forecast
	// the arena imports: importing it empties the stored set of its round
	// and group. Without it such a file is refused.
	ReplaceEmpty bool
}

// Load reads and maps every file; nothing is written. Any malformed file
// fails the whole load.
func Load(files Files, now time.Time) (*Batch, error) {
	if len(files.Questions) == 0 && len(files.Resolutions) == 0 && len(files.Humans) == 0 {
		return nil, arena.Errorf(arena.EINVALID, "forecastbench: no question, resolution or human forecast files given")
	}
	var qsets []*QuestionSet
	for _, p := range files.Questions {
		s, err := readFile(files.Open, p, ReadQuestionSet)
		if err != nil {
			return nil, err
		}
		qsets = append(qsets, s)
	}
	var rsets []*ResolutionSet
	for _, p := range files.Resolutions {
		s, err := readFile(files.Open, p, ReadResolutionSet)
		if err != nil {
			return nil, err
		}
		rsets = append(rsets, s)
	}
	humans, err := loadHumans(files)
	if err != nil {
		return nil, err
	}
	b, err := Build(qsets, rsets, now)
	if err != nil {
		return nil, err
	}
	b.Humans = humans
	return b, nil
}

// loadHumans reads the human forecast files; two files of one round and
// group would each replace the other, so they are refused.
func loadHumans(files Files) ([]*HumanSet, error) {
	var out []*HumanSet
	from := map[string]string{}
	for _, p := range files.Humans {
		s, err := readFile(files.Open, p, ReadHumanSet)
		if err != nil {
			return nil, err
		}
		k := s.ForecastDueDate.Format(time.DateOnly) + "/" + s.Group
		if len(s.Forecasts) == 0 && !files.ReplaceEmpty {
			return nil, arena.Errorf(arena.EINVALID, "forecastbench: %s holds no %s forecast the arena imports for the round due %s (%d combination forecasts skipped): importing it would delete the stored ones; give --replace-empty to empty the set knowingly",
				p, s.Group, s.ForecastDueDate.Format(time.DateOnly), s.Combination)
		}
		if prev, ok := from[k]; ok {
			return nil, arena.Errorf(arena.EINVALID, "forecastbench: %s and %s both hold the %s forecasts of the round due %s: give one",
				prev, p, s.Group, s.ForecastDueDate.Format(time.DateOnly))
		}
		from[k] = p
		out = append(out, s)
	}
	return out, nil
}

// Report says what an import did.
type Report struct {
	Read   ReadStats
	Humans []HumanCount
	Counts []Stats // market, dataset
	Saved  arena.SaveResult
}

// DryRun loads the files and reports what an import would bring, without
// a store (so without merging what one holds).
func DryRun(files Files, now time.Time) (*Report, error) {
	b, err := Load(files, now)
	if err != nil {
		return nil, err
	}
	return &Report{Read: b.Read, Counts: b.Count(), Humans: b.humanCounts()}, nil
}

// Import loads the files, merges what the store already holds for them
// (see Batch.Merge) and saves every market in one SaveMarkets call, so a
// failure leaves the store unchanged. Importing the same files again
// changes nothing.
func Import(ctx context.Context, st Store, files Files, now time.Time) (*Report, error) {
	b, err := Load(files, now)
	if err != nil {
		return nil, err
	}
	return Save(ctx, st, b, now)
}

// Replacement is what importing a human forecast set replaces: the
// forecasts the store holds for its round and group (none when Stored is
// zero), and the set that takes their place.
type Replacement struct {
	Due                  time.Time
	Group                string
	Stored, StoredBy     int // forecasts and forecasters stored now
	Imported, ImportedBy int // forecasts and forecasters of the file
}

// Replacements reads what the store holds of each human forecast set of
// b, for saying what an import replaces before it does.
func Replacements(ctx context.Context, st arena.HumanStore, b *Batch) ([]Replacement, error) {
	stored, err := st.HumanSets(ctx)
	if err != nil {
		return nil, fmt.Errorf("forecastbench: the stored human forecasts: %w", err)
	}
	var out []Replacement
	for _, h := range b.humanCounts() {
		r := Replacement{Due: h.Due, Group: h.Group, Imported: h.Forecasts, ImportedBy: h.Forecasters}
		for _, s := range stored {
			if s.Group == h.Group && s.Due.Format(time.DateOnly) == h.Due.Format(time.DateOnly) {
				r.Stored, r.StoredBy = s.Forecasts, s.Forecasters
			}
		}
		out = append(out, r)
	}
	return out, nil
}

// Store is what an import writes to.
type Store interface {
	arena.MarketStore
	arena.HumanStore
}

// Save merges a loaded batch with what the store holds and writes it: the
// markets in one SaveMarkets call, then each human forecast set in one
// transaction that replaces the stored set of its round and group. Every
// file was parsed and checked before, so only a storage failure can stop
// it between the two; importing the same files again then completes it.
// A batch is saved once.
func Save(ctx context.Context, st Store, b *Batch, now time.Time) (*Report, error) {
	stored, err := st.Markets(ctx, arena.MarketFilter{Source: arena.SourceForecastBench})
	if err != nil {
		return nil, fmt.Errorf("forecastbench: load stored markets: %w", err)
	}
	existing := make(map[string]*arena.Market, len(stored))
	for _, m := range stored {
		existing[m.SourceID] = m
	}
	b.Merge(existing, now)
	for _, m := range b.Markets {
		if err := m.Validate(); err != nil {
			return nil, fmt.Errorf("forecastbench: after merge: %w", err)
		}
	}
	saved, err := st.SaveMarkets(ctx, b.Markets)
	if err != nil {
		return nil, fmt.Errorf("forecastbench: save %d markets: %w", len(b.Markets), err)
	}
	for _, h := range b.Humans {
		if err := st.ReplaceHumanForecasts(ctx, h.ForecastDueDate, h.Group, h.Forecasts); err != nil {
			return nil, fmt.Errorf("forecastbench: save the %s forecasts due %s: %w", h.Group, h.ForecastDueDate.Format(time.DateOnly), err)
		}
	}
	return &Report{Read: b.Read, Counts: b.Count(), Saved: saved, Humans: b.humanCounts()}, nil
}
