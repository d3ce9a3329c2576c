package store

import (
	"cmp"
	"context"
	"database/sql"
	"fmt"

	"github.com/forecast-arena/arena"
)

const agentColumns = `address, kind, nonce, name, organisation, model, homepage, description, profile_version, profile_spent_until`

func scanAgent(sc scanner) (arena.AgentInfo, error) {
	var a arena.AgentInfo
	var nonce, version int64
	var spent sql.NullInt64
	err := sc.Scan(&a.Address, &a.Kind, &nonce, &a.Name, &a.Organisation, &a.Model, &a.Homepage, &a.Description, &version, &spent)
	a.Nonce, a.ProfileVersion, a.ProfileSpentUntil = uint64(nonce), uint64(version), fromMicros(spent)
	return a, err
}

// Agent implements arena.RoundStore.
func (d *DB) Agent(ctx context.Context, address string) (*arena.AgentInfo, error) {
	return d.agentIn(ctx, d.r(), address)
}

func (d *DB) agentIn(ctx context.Context, q queryer, address string) (*arena.AgentInfo, error) {
	a, err := lookup(q.QueryRowContext(ctx, d.rebind(`SELECT `+agentColumns+` FROM agents WHERE address = ?`), address), scanAgent, "agent "+address)
	if err != nil {
		return nil, err
	}
	return &a, nil
}

// Agents implements arena.RoundStore, ordered by address.
func (d *DB) Agents(ctx context.Context) ([]arena.AgentInfo, error) {
	out, err := queryAll(ctx, d.r(), `SELECT `+agentColumns+` FROM agents ORDER BY address`, nil, scanAgent)
	if err != nil {
		return nil, fmt.Errorf("store: agents: %w", err)
	}
	return out, nil
}

// SetAgent implements arena.RoundStore: registers an agent or overwrites
// its kind and profile, without touching its nonce or profile version.
func (d *DB) SetAgent(ctx context.Context, a arena.AgentInfo) error {
	return d.tx(ctx, func(tx *sql.Tx) error {
		_, err := d.writeProfile(ctx, tx, a, nil)
		return err
	})
}

// SetProfile implements arena.RoundStore. The write is a compare-and-set
// on the profile version read, so of two updates racing from the same
// version (on PostgreSQL's READ COMMITTED too, and across replicas) one
// is stored and the other refused; the unique indexes on the name's keys
// settle two agents racing for one name.
func (d *DB) SetProfile(ctx context.Context, a arena.AgentInfo, leaf *arena.LogLeaf, check func(cur, next *arena.AgentInfo) error) error {
	return d.tx(ctx, func(tx *sql.Tx) error {
		cur, err := d.agentIn(ctx, tx, a.Address)
		if arena.ErrorKind(err) == arena.ENOTFOUND {
			cur, err = nil, nil
		}
		if err != nil {
			return err
		}
		if check != nil {
			if err := check(cur, &a); err != nil {
				return err
			}
		}
		var read uint64
		if cur != nil {
			read = cur.ProfileVersion
		}
		stored, err := d.writeProfile(ctx, tx, a, &read)
		if err != nil {
			return err
		}
		if !stored {
			return arena.Rejectf(arena.ECONFLICT, arena.CodeProfileVersionInvalid,
				"agent %s: another profile update was stored meanwhile; sign the next version and send again", a.Address)
		}
		if leaf != nil {
			if _, err := d.appendLogIn(ctx, tx, []timedLeaf{{leaf, d.Now()}}); err != nil {
				return fmt.Errorf("store: append the profile of %s to the log: %w", a.Address, err)
			}
		}
		return nil
	})
}

// writeProfile upserts a's profile and kind (a new agent's kind defaults
// to external; an empty kind keeps the stored one). With read set it
// also writes the profile version and the allowance spent, provided the
// stored version is still *read, and reports whether it was.
func (d *DB) writeProfile(ctx context.Context, tx *sql.Tx, a arena.AgentInfo, read *uint64) (bool, error) {
	var folded, exact any // NULL: no name, no keys
	if a.Name != "" {
		folded, exact = arena.NameKeys(a.Name)
		var holder string
		err := tx.QueryRowContext(ctx, d.rebind(`SELECT address FROM agents WHERE (name_key = ? OR name_skeleton = ?) AND address <> ?`),
			folded, exact, a.Address).Scan(&holder)
		switch {
		case err == nil:
			return false, nameTaken(a.Name, holder)
		case !isNoRows(err):
			return false, fmt.Errorf("store: who holds the name %q: %w", a.Name, err)
		}
	}
	set := `name = excluded.name, organisation = excluded.organisation, model = excluded.model, homepage = excluded.homepage,
		description = excluded.description, name_key = excluded.name_key, name_skeleton = excluded.name_skeleton`
	if a.Kind != "" {
		set += `, kind = excluded.kind`
	}
	args := []any{a.Address, cmp.Or(a.Kind, "external"), d.Now().UnixMicro(), a.Name, a.Organisation, a.Model, a.Homepage, a.Description, folded, exact,
		int64(a.ProfileVersion), micros(a.ProfileSpentUntil)}
	if read != nil {
		set += `, profile_version = excluded.profile_version, profile_spent_until = excluded.profile_spent_until WHERE agents.profile_version = ?`
		args = append(args, int64(*read))
	} else {
		args[len(args)-2], args[len(args)-1] = int64(0), nil // a new agent's; a known one keeps its own
	}
	res, err := tx.ExecContext(ctx, d.rebind(`INSERT INTO agents (address, kind, created_at, name, organisation, model, homepage, description, name_key,
		name_skeleton, profile_version, profile_spent_until) VALUES (?,?,?,?,?,?,?,?,?,?,?,?) ON CONFLICT (address) DO UPDATE SET `+set), args...)
	if err != nil && isUniqueViolation(err) {
		return false, nameTaken(a.Name, "")
	}
	if err != nil {
		return false, fmt.Errorf("store: write the profile of %s: %w", a.Address, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return false, fmt.Errorf("store: write the profile of %s: %w", a.Address, err)
	}
	if n == 1 {
		d.touch(tx, arena.DomainAgents)
	}
	return n == 1, nil
}

func nameTaken(name, holder string) error {
	if holder == "" {
		holder = "another agent"
	}
	return arena.Rejectf(arena.ECONFLICT, arena.CodeProfileNameTaken, "the name %q is taken by %s (names are compared ignoring case, compatibility forms and look-alike characters)", name, holder)
}

// AgentSubmissions implements arena.RoundStore.
func (d *DB) AgentSubmissions(ctx context.Context, agent string) ([]arena.AgentSubmission, error) {
	out, err := queryAll(ctx, d.r(), d.rebind(`SELECT round_id, revealed_at FROM submissions WHERE agent = ? ORDER BY round_id`),
		[]any{agent}, func(sc scanner) (arena.AgentSubmission, error) {
			var id int64
			var revealed sql.NullInt64
			err := sc.Scan(&id, &revealed)
			return arena.AgentSubmission{RoundID: uint64(id), Revealed: revealed.Valid}, err
		})
	if err != nil {
		return nil, fmt.Errorf("store: submissions of agent %s: %w", agent, err)
	}
	return out, nil
}

// rekeyAgentNames sets the name keys (arena.NameKeys) of every named
// agent whose keys are unset, oldest agent first; an agent whose name is
// one with an earlier agent's keeps its keys unset, and so its name
// unreserved, until it next changes its profile.
func rekeyAgentNames(ctx context.Context, d *DB, tx *sql.Tx) error {
	type named struct{ address, name string }
	agents, err := queryAll(ctx, tx, `SELECT address, name FROM agents WHERE name <> '' AND name_key IS NULL ORDER BY created_at, address`, nil,
		func(sc scanner) (named, error) {
			var a named
			return a, sc.Scan(&a.address, &a.name)
		})
	if err != nil {
		return fmt.Errorf("read the agents' names: %w", err)
	}
	var taken arena.NameSet
	for _, a := range agents {
		if _, dup := taken.Holder(a.name); dup {
			continue
		}
		taken.Add(a.name, a.address)
		folded, exact := arena.NameKeys(a.name)
		if _, err := tx.ExecContext(ctx, d.rebind(`UPDATE agents SET name_key = ?, name_skeleton = ? WHERE address = ?`), folded, exact, a.address); err != nil {
			return fmt.Errorf("key the name of agent %s: %w", a.address, err)
		}
	}
	return nil
}
