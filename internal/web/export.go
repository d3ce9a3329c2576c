package web

import (
	"net/http"
	"strings"
	"time"

	"github.com/forecast-arena/arena"
	"github.com/forecast-arena/arena/export"
	"github.com/forecast-arena/arena/internal/web/openapi"
)

// Exports over HTTP are the tables `arena export` writes, streamed from
// the same export package row by row: CSV (formula cells escaped) or JSON
// Lines. Prompts are never exported, by the CLI or here: the trace API
// shows them per round after its trigger. The log table covers the log as
// it stands when the request reads it, which the latest checkpoint
// (/log/checkpoint) may not cover yet.

// ExportIndexJSON lists the downloadable tables.
type ExportIndexJSON struct {
	Formats []string          `json:"formats"`
	Tables  []ExportTableJSON `json:"tables"`
}

// ExportTableJSON is one downloadable table: its columns and its URLs.
type ExportTableJSON struct {
	Name    string            `json:"name"`
	Columns []string          `json:"columns"`
	URLs    map[string]string `json:"urls"`
}

func init() {
	apiOps = append(apiOps,
		openapi.Op{Method: "GET", Path: "/api/v1/export", ID: "listExportTables", Tag: tagExport, Summary: "The exported tables",
			Desc: "The exported tables, their columns and download URLs.", Response: ExportIndexJSON{}},
		openapi.Op{Method: "GET", Path: "/api/v1/export/{file}", ID: "downloadExportTable", Tag: tagExport, Summary: "One exported table",
			Desc: "One exported table streamed as {table}.csv or {table}.jsonl, the files `arena export` writes " +
				"(commits and reveals of a round not triggered yet are left out, their log leaves sealed); since (RFC 3339) keeps the rounds whose commit deadline is at or after it; 404 export_not_found for another file name.",
			Fails: []int{404},
			Query: []openapi.Param{{Name: "since", Format: "date-time", Example: "2026-01-01T00:00:00Z", Desc: "keep the rounds whose commit deadline is at or after this time"}}, Media: []string{"text/csv", "application/jsonl"}},
	)
}

func (s *Server) registerExport() {
	s.handle("GET /api/v1/export", s.exportIndex)
	s.handle("GET /api/v1/export/{file}", s.exportTable)
}

func (s *Server) exportIndex(w http.ResponseWriter, r *http.Request) error {
	v := ExportIndexJSON{Formats: []string{export.CSV, export.JSONL}, Tables: []ExportTableJSON{}}
	for _, sp := range export.Specs {
		if sp.Name == "log_entries" && s.log == nil {
			continue
		}
		t := ExportTableJSON{Name: sp.Name, Columns: sp.Columns, URLs: map[string]string{}}
		for _, f := range v.Formats {
			t.URLs[f] = "/api/v1/export/" + sp.Name + "." + f
		}
		v.Tables = append(v.Tables, t)
	}
	return s.writeJSON(w, r, v)
}

func (s *Server) exportTable(w http.ResponseWriter, r *http.Request) error {
	file := r.PathValue("file")
	name, format, _ := strings.Cut(file, ".")
	if _, ok := export.SpecOf(name); !ok || (name == "log_entries" && s.log == nil) {
		return arena.Rejectf(arena.ENOTFOUND, "export_not_found", "no exported table %q: see /api/v1/export", file)
	}
	ctype := map[string]string{export.CSV: "text/csv; charset=utf-8", export.JSONL: "application/jsonl; charset=utf-8"}[format]
	if ctype == "" {
		return arena.Rejectf(arena.ENOTFOUND, "export_not_found", "no exported table %q: want %s.csv or %s.jsonl", file, name, name)
	}
	var since time.Time
	if v := r.URL.Query().Get("since"); v != "" {
		since, _ = time.Parse(time.RFC3339, v) // checked by checkQuery
	}
	h := w.Header()
	h.Set("Content-Type", ctype)
	h.Set("Content-Disposition", `attachment; filename="`+name+"."+format+`"`)
	h.Set("Cache-Control", "no-store")
	sw := &startedWriter{w: w}
	_, err := export.Stream(r.Context(), sw, export.Source{Forecast: s.forecast, Log: s.log}, name, format, since)
	if err == nil || !sw.started {
		if err != nil {
			h.Del("Content-Disposition")
		}
		return err
	}
	// The status and part of the body are out: abort the response, so
	// that the client sees a broken transfer, never a short file.
	if r.Context().Err() == nil {
		s.logger.Error("http: export failed mid-stream", "path", r.URL.Path, "err", err)
	}
	panic(http.ErrAbortHandler)
}

// startedWriter notes whether anything was written, i.e. whether the
// status line has gone out.
type startedWriter struct {
	w       http.ResponseWriter
	started bool
}

func (s *startedWriter) Write(b []byte) (int, error) {
	s.started = true
	return s.w.Write(b)
}
