package store

import (
	"cmp"
	"context"
	"database/sql"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"
)

// schemaItem is one part of a SQLite schema: a table, a column, an index,
// a foreign key, a trigger or a view, described well enough that two
// databases built by the same migrations describe it the same way.
type schemaItem struct {
	table string // the table it belongs to ("" for triggers and views)
	def   string // its definition ("" for a table: its parts are items)
}

// sameSchema checks that the SQLite database db has exactly the tables,
// columns, indexes and foreign keys that its applied migrations create,
// by building that schema in memory from the embedded migrations. pending
// are the migrations db has not applied (Open applies them later).
func sameSchema(ctx context.Context, db *sql.DB, pending []string) error {
	mem, err := sql.Open("sqlite", "file:expected?mode=memory")
	if err != nil {
		return fmt.Errorf("store: expected schema: %w", err)
	}
	defer mem.Close()
	mem.SetMaxOpenConns(1) // one connection: one in-memory database
	skip := map[string]bool{}
	for _, p := range pending {
		skip[p] = true
	}
	exp := &DB{db: mem, dialect: sqlite, Now: func() time.Time { return time.Now().UTC() }}
	if err := exp.migrate(ctx, skip); err != nil {
		return fmt.Errorf("store: expected schema: %w", err)
	}
	want, err := describeSchema(ctx, mem)
	if err != nil {
		return fmt.Errorf("store: expected schema: %w", err)
	}
	got, err := describeSchema(ctx, db)
	if err != nil {
		return fmt.Errorf("read schema: %w", err)
	}
	// Table by table; a missing or unexpected table is one problem, not
	// one per column and index of it.
	tableOf := func(k string) string { return cmp.Or(want[k].table, got[k].table) }
	keys := slices.Collect(maps.Keys(want))
	for k := range got {
		if _, ok := want[k]; !ok {
			keys = append(keys, k)
		}
	}
	slices.SortFunc(keys, func(a, b string) int { return cmp.Or(cmp.Compare(tableOf(a), tableOf(b)), cmp.Compare(a, b)) })
	// partOfAbsent: k belongs to a table that m lacks altogether.
	partOfAbsent := func(m map[string]schemaItem, k string) bool {
		t := tableOf(k)
		_, ok := m["table "+t]
		return t != "" && k != "table "+t && !ok
	}
	var problems []string
	for _, k := range keys {
		w, inWant := want[k]
		g, inGot := got[k]
		switch {
		case !inGot && !partOfAbsent(got, k):
			problems = append(problems, "missing "+k)
		case !inWant && !partOfAbsent(want, k):
			problems = append(problems, "unexpected "+k)
		case inWant && inGot && w.def != g.def:
			problems = append(problems, fmt.Sprintf("%s is %s, want %s", k, g.def, w.def))
		}
	}
	if len(problems) == 0 {
		return nil
	}
	if len(problems) > 8 {
		problems = append(problems[:8], fmt.Sprintf("and %d more", len(problems)-8))
	}
	return fmt.Errorf("its schema differs from the one its migrations create: %s", strings.Join(problems, "; "))
}

// describeSchema lists the parts of db's schema by a key naming each
// (such as "column rounds.id"). Indexes SQLite makes for UNIQUE and
// PRIMARY KEY constraints are keyed by their columns, not their generated
// names.
func describeSchema(ctx context.Context, db *sql.DB) (map[string]schemaItem, error) {
	type object struct{ typ, name, sql string }
	objs, err := queryAll(ctx, db, `SELECT type, name, COALESCE(sql, '') FROM sqlite_master WHERE name NOT LIKE 'sqlite\_%' ESCAPE '\' ORDER BY name`, nil,
		func(sc scanner) (object, error) {
			var o object
			return o, sc.Scan(&o.typ, &o.name, &o.sql)
		})
	if err != nil {
		return nil, err
	}
	out := map[string]schemaItem{}
	for _, o := range objs {
		switch o.typ {
		case "table":
			if err := describeTable(ctx, db, o.name, out); err != nil {
				return nil, fmt.Errorf("table %s: %w", o.name, err)
			}
		case "trigger", "view":
			out[o.typ+" "+o.name] = schemaItem{def: strings.Join(strings.Fields(o.sql), " ")}
		}
	}
	return out, nil
}

// describeTable adds table t, its columns, indexes and foreign keys to out.
func describeTable(ctx context.Context, db *sql.DB, t string, out map[string]schemaItem) error {
	out["table "+t] = schemaItem{table: t}
	type column struct {
		name, typ, dflt string
		notNull, pk     int
	}
	cols, err := queryAll(ctx, db, `SELECT name, type, "notnull", COALESCE(dflt_value, ''), pk FROM pragma_table_info(?)`, []any{t},
		func(sc scanner) (column, error) {
			var c column
			return c, sc.Scan(&c.name, &c.typ, &c.notNull, &c.dflt, &c.pk)
		})
	if err != nil {
		return err
	}
	for _, c := range cols {
		def := c.typ
		if c.notNull != 0 {
			def += " NOT NULL"
		}
		if c.dflt != "" {
			def += " DEFAULT " + c.dflt
		}
		if c.pk != 0 {
			def += fmt.Sprintf(" (primary key part %d)", c.pk)
		}
		out[fmt.Sprintf("column %s.%s", t, c.name)] = schemaItem{table: t, def: strings.TrimSpace(def)}
	}
	type index struct {
		name, origin    string
		unique, partial int
	}
	idxs, err := queryAll(ctx, db, `SELECT name, "unique", origin, partial FROM pragma_index_list(?)`, []any{t},
		func(sc scanner) (index, error) {
			var i index
			return i, sc.Scan(&i.name, &i.unique, &i.origin, &i.partial)
		})
	if err != nil {
		return err
	}
	for _, i := range idxs {
		names, err := queryAll(ctx, db, `SELECT COALESCE(name, '<expression>') FROM pragma_index_info(?) ORDER BY seqno`, []any{i.name},
			func(sc scanner) (string, error) {
				var n string
				return n, sc.Scan(&n)
			})
		if err != nil {
			return err
		}
		on := fmt.Sprintf("on %s (%s)", t, strings.Join(names, ", "))
		def := "an index"
		if i.unique != 0 {
			def = "a unique index"
		}
		if i.partial != 0 {
			def += " (partial)"
		}
		if i.origin == "c" { // CREATE INDEX: known by its name
			out["index "+i.name] = schemaItem{table: t, def: def + " " + on}
		} else { // made for a UNIQUE ("u") or PRIMARY KEY ("pk") constraint
			out[map[string]string{"u": "unique constraint ", "pk": "primary key "}[i.origin]+on] = schemaItem{table: t, def: def}
		}
	}
	type fk struct{ parent, from, to, onUpdate, onDelete string }
	fks, err := queryAll(ctx, db, `SELECT "table", "from", COALESCE("to", ''), on_update, on_delete FROM pragma_foreign_key_list(?)`, []any{t},
		func(sc scanner) (fk, error) {
			var f fk
			return f, sc.Scan(&f.parent, &f.from, &f.to, &f.onUpdate, &f.onDelete)
		})
	if err != nil {
		return err
	}
	for _, f := range fks {
		out[fmt.Sprintf("foreign key %s.%s", t, f.from)] = schemaItem{table: t, def: fmt.Sprintf("→ %s(%s) on update %s on delete %s", f.parent, f.to, f.onUpdate, f.onDelete)}
	}
	return nil
}
