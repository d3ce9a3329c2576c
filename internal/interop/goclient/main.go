// Command goclient calls an arena through the client oapi-codegen
// generates from its OpenAPI document (client.gen.go, written beside this
// file by cmd/arena's TestInterop and not kept in the repository): the
// signing domain, the newest rounds, one round by id and a round that does
// not exist. It prints what it got as JSON for the test to compare with
// the API's own answers.
//
// Usage: goclient BASE_URL
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
)

func main() {
	if err := run(context.Background(), os.Args[1]); err != nil {
		fmt.Fprintln(os.Stderr, "goclient:", err)
		os.Exit(1)
	}
}

// Result is what the calls returned.
type Result struct {
	Domain   DomainJSON  `json:"domain"`
	Rounds   []RoundJSON `json:"rounds"`
	Round    RoundJSON   `json:"round"`
	NotFound ErrorJSON   `json:"not_found"`
}

func run(ctx context.Context, base string) error {
	c, err := NewClientWithResponses(base)
	if err != nil {
		return err
	}
	var res Result
	d, err := c.GetDomainWithResponse(ctx)
	if err != nil {
		return err
	}
	if d.JSON200 == nil {
		return fmt.Errorf("getDomain: %d %s", d.StatusCode(), d.Body)
	}
	res.Domain = *d.JSON200
	limit := 2
	rs, err := c.ListRoundsWithResponse(ctx, &ListRoundsParams{Limit: &limit})
	if err != nil {
		return err
	}
	if rs.JSON200 == nil || len(*rs.JSON200) == 0 {
		return fmt.Errorf("listRounds: %d %s", rs.StatusCode(), rs.Body)
	}
	res.Rounds = *rs.JSON200
	r, err := c.GetRoundWithResponse(ctx, int64(res.Rounds[0].Id))
	if err != nil {
		return err
	}
	if r.JSON200 == nil {
		return fmt.Errorf("getRound: %d %s", r.StatusCode(), r.Body)
	}
	res.Round = *r.JSON200
	missing, err := c.GetRoundWithResponse(ctx, 1<<40)
	if err != nil {
		return err
	}
	if missing.JSON404 == nil {
		return fmt.Errorf("getRound of a missing round: %d %s", missing.StatusCode(), missing.Body)
	}
	res.NotFound = *missing.JSON404
	return json.NewEncoder(os.Stdout).Encode(res)
}
