package participant_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"time"

	"github.com/ethereum/go-ethereum/common"

	"github.com/forecast-arena/arena/forecast"
	"github.com/forecast-arena/arena/participant"
)

// halfStrategy forecasts 50% on every market of a round: the smallest
// Strategy. A real one reads the round's questions (r.Markets) and
// returns one probability in basis points per market, with optional
// per-market reasoning.
type halfStrategy struct{}

func (halfStrategy) Name() string { return "half" }

func (halfStrategy) Forecast(_ context.Context, r *forecast.RoundJSON) ([]uint16, []string, error) {
	ps := make([]uint16, len(r.Markets))
	for i := range ps {
		ps[i] = forecast.MaxBps / 2
	}
	return ps, nil, nil
}

// Take part in an arena: a key, a state directory that keeps the salts of
// commits until they are revealed, and a strategy. Run RunOnce from cron;
// each run does what is due (commit before the deadline, reveal in the
// window) and resumes after a crash. The server here is a stand-in that
// answers the four requests a commit takes and checks its EIP-712
// signature as an arena does.
func Example() {
	domain := forecast.Domain{ChainID: 0, Contract: common.HexToAddress("0x00000000000000000000000000000000000a4e4a")}
	deadline := time.Now().Add(30 * time.Minute).UTC().Truncate(time.Second)
	round := forecast.RoundJSON{ID: 7, Status: "open", CommitDeadline: deadline, RevealStart: deadline.Add(time.Hour),
		RevealDeadline: deadline.Add(2 * time.Hour), Markets: []forecast.RoundMarketJSON{{Index: 0, MarketID: 11}, {Index: 1, MarketID: 12}}}
	mux := http.NewServeMux()
	reply := func(w http.ResponseWriter, status int, v any) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		json.NewEncoder(w).Encode(v)
	}
	mux.HandleFunc("GET /api/v1/domain", func(w http.ResponseWriter, _ *http.Request) {
		reply(w, 200, forecast.DomainJSON{Name: forecast.DomainName, Version: forecast.DomainVersion, VerifyingContract: domain.Contract.Hex()})
	})
	mux.HandleFunc("GET /api/v1/rounds", func(w http.ResponseWriter, _ *http.Request) { reply(w, 200, []forecast.RoundJSON{round}) })
	mux.HandleFunc("GET /api/v1/rounds/7", func(w http.ResponseWriter, _ *http.Request) { reply(w, 200, round) })
	mux.HandleFunc("GET /api/v1/agents/{agent}/nonce", func(w http.ResponseWriter, _ *http.Request) { reply(w, 200, forecast.NonceJSON{}) })
	mux.HandleFunc("POST /api/v1/rounds/7/commits", func(w http.ResponseWriter, r *http.Request) {
		var req forecast.CommitRequest
		json.NewDecoder(r.Body).Decode(&req)
		sig, _ := forecast.DecodeSignature(req.Signature)
		c := forecast.Commit{RoundID: 7, CommitHash: common.HexToHash(req.CommitHash), Agent: common.HexToAddress(req.Agent),
			Nonce: req.Nonce, Deadline: req.Deadline}
		if err := domain.VerifyCommit(c, sig); err != nil {
			reply(w, 400, map[string]any{"error": map[string]string{"code": "signature_invalid", "message": err.Error()}})
			return
		}
		fmt.Println("server: commit signed by the agent, for round", c.RoundID)
		reply(w, 201, map[string]any{})
	})
	server := httptest.NewServer(mux)
	defer server.Close()

	key, err := forecast.GenerateKey() // keep it: it is the agent's identity (arena agent keygen writes one)
	if err != nil {
		log.Fatal(err)
	}
	state, err := os.MkdirTemp("", "participant-example-")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(state)
	c := &participant.Client{Server: server.URL, Key: key, StateDir: state, Strategy: halfStrategy{}}
	rep, err := c.RunOnce(context.Background())
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("committed %d, revealed %d\n", rep.Committed, rep.Revealed)
	// Output:
	// server: commit signed by the agent, for round 7
	// committed 1, revealed 0
}
