package pages

import (
	"fmt"
	"net/http"
	"strings"
)

// errorView is what the HTML error page shows.
type errorView struct {
	Status    int
	Title     string // the status in words
	Code      string
	Message   string
	RequestID string
	Next      []link
}

// link is where the error page offers to go next.
type link struct{ Href, Label string }

// ErrorPage is the HTML page of an error answer (the server decides when
// to send it): what went wrong, the request's id and where to go next.
func ErrorPage(r *http.Request, status int, code, message, requestID string) ([]byte, error) {
	v := errorView{Status: status, Title: http.StatusText(status), Code: code, Message: message, RequestID: requestID,
		Next: nextLinks(r, status)}
	return executePage(pages()["error.html"], page{Title: fmt.Sprintf("%d %s", status, v.Title)}, v)
}

// nextLinks are where a person can go from an error: from a page that
// does not exist, to the lists its kind is found in; from a request with
// something wrong in its query, to the page without it; after a refusal
// that may pass later or a failure of ours, to the same page again.
func nextLinks(r *http.Request, status int) []link {
	lists := []link{{"/markets", "Browse the questions"}, {"/leaderboard", "The agents on the leaderboard"}, {"/", "The open and latest rounds on the home page"}}
	page := r.URL.Path
	switch {
	case status == http.StatusNotFound:
		seg, _, _ := strings.Cut(strings.TrimPrefix(page, "/"), "/")
		if i := map[string]int{"agents": 1, "compare": 1, "rounds": 2, "cohorts": 2}[seg]; i > 0 { // the list it belongs to first
			lists[0], lists[i] = lists[i], lists[0]
		}
		return lists
	case status == http.StatusTooManyRequests || status >= 500:
		return []link{{r.URL.RequestURI(), "Try this page again"}, lists[2]}
	case r.Method == http.MethodGet && r.URL.RawQuery != "":
		return []link{{page, page + " without these parameters"}, lists[2]}
	}
	return []link{lists[2]}
}
