package rounds

import (
	"context"
	"errors"
	"time"

	"github.com/forecast-arena/arena"
	"github.com/forecast-arena/arena/forecast"
)

func profileJSON(a arena.AgentInfo) forecast.ProfileJSON {
	return forecast.ProfileJSON{Agent: a.Address, Kind: a.Kind, Version: a.ProfileVersion, ProfileFields: forecast.ProfileFields{Name: a.Name,
		Organisation: a.Organisation, Model: a.Model, Homepage: a.Homepage, Description: a.Description}}
}

// Profile returns an agent's profile as the API shows it; an address
// never seen has an empty one at version 0.
func (s *Service) Profile(ctx context.Context, agent string) (forecast.ProfileJSON, error) {
	addr, err := forecast.ParseAddress(agent)
	if err != nil {
		return forecast.ProfileJSON{}, err
	}
	a, err := s.Store.Agent(ctx, addr.Hex())
	if arena.ErrorKind(err) == arena.ENOTFOUND {
		return forecast.ProfileJSON{Agent: addr.Hex()}, nil
	}
	if err != nil {
		return forecast.ProfileJSON{}, err
	}
	return profileJSON(*a), nil
}

// SetProfile verifies and records a signed profile update of agent, and
// logs it. It refuses, storing nothing, a profile that is not in normal
// form or out of bounds, a signature that is not the agent's under this
// arena's domain, a deadline past or more than 24 h ahead, a name another
// agent or a baseline holds (or one that passes for it), any version but
// the next, and an update past the agent's allowance of updates a day.
func (s *Service) SetProfile(ctx context.Context, agent string, req forecast.ProfileRequest) (forecast.ProfileJSON, error) {
	addr, err := forecast.ParseAddress(agent)
	if err != nil {
		return forecast.ProfileJSON{}, err
	}
	if err := forecast.CheckProfile(req.ProfileFields); err != nil {
		return forecast.ProfileJSON{}, err
	}
	if err := s.Domain.CheckRequest(req.ChainID, req.VerifyingContract); err != nil {
		return forecast.ProfileJSON{}, err
	}
	sig, err := forecast.DecodeSignature(req.Signature)
	if err != nil {
		return forecast.ProfileJSON{}, err
	}
	msg := forecast.Profile{Agent: addr, ProfileFields: req.ProfileFields, Version: req.Version, Deadline: req.Deadline}
	if err := s.Domain.VerifyProfile(msg, sig); err != nil {
		return forecast.ProfileJSON{}, err
	}
	now := s.now()
	if err := forecast.CheckDeadline(req.Deadline, now); err != nil {
		return forecast.ProfileJSON{}, err
	}
	if err := forecast.CheckReservedName(req.Name); err != nil {
		return forecast.ProfileJSON{}, err
	}
	if err := s.Admission.admitNew(ctx, addr.Hex(), now); err != nil {
		return forecast.ProfileJSON{}, err
	}
	f := req.ProfileFields
	entry := forecast.ProfileEntry{Agent: addr.Hex(), Name: f.Name, Organisation: f.Organisation, Model: f.Model, Homepage: f.Homepage,
		Description: f.Description, Version: req.Version, Deadline: req.Deadline, Signature: forecast.EncodeSignature(sig)}
	l, err := leaf(logProfile, entry)
	if err != nil {
		return forecast.ProfileJSON{}, err
	}
	a := arena.AgentInfo{Address: addr.Hex(), Name: f.Name, Organisation: f.Organisation, Model: f.Model, Homepage: f.Homepage,
		Description: f.Description, ProfileVersion: req.Version}
	err = s.Store.SetProfile(ctx, a, l, func(cur, next *arena.AgentInfo) error {
		var stored uint64
		var spent time.Time
		if cur != nil {
			stored, spent, a.Kind = cur.ProfileVersion, cur.ProfileSpentUntil, cur.Kind
		}
		if req.Version != stored+1 {
			return forecast.Reject(forecast.CodeProfileVersionInvalid, "version %d: agent %s's profile is at version %d, so the next update is version %d",
				req.Version, addr.Hex(), stored, stored+1)
		}
		until, err := s.Admission.spendProfileUpdate(addr.Hex(), spent, now)
		next.ProfileSpentUntil = until
		return err
	})
	if err != nil {
		return forecast.ProfileJSON{}, err
	}
	s.log().InfoContext(ctx, "agent profile updated", "agent", addr.Hex(), "version", req.Version)
	if a.Kind == "" {
		a.Kind = "external"
	}
	return profileJSON(a), nil
}

// ProfileStore is what registering an agent needs of storage.
type ProfileStore interface {
	SetProfile(ctx context.Context, a arena.AgentInfo, leaf *arena.LogLeaf, check func(cur, next *arena.AgentInfo) error) error
}

// errOwnProfile: the agent signed a profile of its own, which the
// operator's registration leaves alone.
var errOwnProfile = errors.New("rounds: the agent signed its own profile")

// RegisterAgent records the kind and profile of an agent the operator
// runs (hosted or simulated): checked as a signed update is, under the
// same unique names, but unsigned and unlogged, so its fields are the
// operator's claim. An agent that signed a profile of its own keeps it.
func RegisterAgent(ctx context.Context, st ProfileStore, a arena.AgentInfo) error {
	if err := forecast.CheckProfile(forecast.ProfileFields{Name: a.Name, Organisation: a.Organisation, Model: a.Model, Homepage: a.Homepage,
		Description: a.Description}); err != nil {
		return err
	}
	if err := forecast.CheckReservedName(a.Name); err != nil {
		return err
	}
	a.ProfileVersion = 0
	err := st.SetProfile(ctx, a, nil, func(cur, _ *arena.AgentInfo) error {
		if cur != nil && cur.ProfileVersion > 0 {
			return errOwnProfile
		}
		return nil
	})
	if errors.Is(err, errOwnProfile) {
		return nil
	}
	return err
}

// Profiles returns every agent's record by id, baselines included (kind
// builtin, their fixed display names): the one source of what the
// leaderboards, pages, exports and tables call an agent.
func (s *Service) Profiles(ctx context.Context) (map[string]arena.AgentInfo, error) {
	return profiles(ctx, s.Store)
}

func profiles(ctx context.Context, st arena.RoundStore) (map[string]arena.AgentInfo, error) {
	out := map[string]arena.AgentInfo{}
	for id, name := range forecast.BaselineNames() {
		out[id] = arena.AgentInfo{Address: id, Name: name, Kind: "builtin"}
	}
	agents, err := st.Agents(ctx)
	if err != nil {
		return nil, err
	}
	for _, a := range agents {
		if b, ok := out[a.Address]; ok && a.Name == "" {
			a.Name = b.Name
		}
		out[a.Address] = a
	}
	return out, nil
}
