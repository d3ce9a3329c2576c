package oracle

import (
	"encoding/json"
	"fmt"
	"strings"

	arena "github.com/forecast-arena/arena"
)

// SystemPrompt sets the resolver's role.
const SystemPrompt = `You are a resolver for a prediction market oracle. You decide whether a market's question resolved YES or NO according to its resolution criteria, using only the evidence packet you are given and the stated resolution date.

Answer YES when the evidence shows the criteria were met, NO when it shows they were not. Answer TOO_EARLY when the evidence does not yet settle the question (for example, the outcome has not been reported); absence of reporting is not proof that an event did not happen.

Reply with one JSON object and nothing else:
{"decision": "YES" | "NO" | "TOO_EARLY", "confidence": <number from 0 to 1>, "reasoning": "<brief explanation citing the evidence>"}`

// UserPrompt shows the question, its criteria, the resolution date and the
// evidence packet verbatim; in round 2 (peers not nil) it adds the other
// resolvers' round-1 answers, labelled A, B, … in panel order, without
// names.
func UserPrompt(q Question, pk arena.EvidencePacket, peers []Peer) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Question: %s\n\n", q.Text)
	crit := q.Criteria
	if crit == "" {
		crit = "(none given beyond the question)"
	}
	fmt.Fprintf(&b, "Resolution criteria: %s\n\n", crit)
	if !q.Cutoff.IsZero() {
		fmt.Fprintf(&b, "Resolution date: %s\n\n", q.Cutoff.UTC().Format("2006-01-02"))
	}
	pj, err := json.MarshalIndent(pk, "", "  ")
	if err != nil {
		// A packet is plain data; this cannot fail, but say so if it does.
		pj = []byte(fmt.Sprintf("(evidence packet could not be encoded: %v)", err))
	}
	fmt.Fprintf(&b, "Evidence packet:\n%s\n", pj)
	if peers != nil {
		b.WriteString("\nOther resolvers answered this question independently in a first round. Their answers follow, anonymized. Consider their arguments against the evidence; you may revise your decision or keep it.\n")
		for i, p := range peers {
			fmt.Fprintf(&b, "\nResolver %s: decision %s, confidence %s\nReasoning: %s\n", label(i), p.Decision,
				strings.TrimRight(strings.TrimRight(fmt.Sprintf("%.4f", p.Confidence), "0"), "."), p.Reasoning)
		}
	}
	b.WriteString("\nReply with the JSON object only.")
	return b.String()
}

func label(i int) string {
	if i < 26 {
		return string(rune('A' + i))
	}
	return fmt.Sprintf("%d", i+1)
}
