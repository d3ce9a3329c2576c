package store

// SetPortfolioReadHook installs fn between the two reads of Portfolios and
// Portfolio and returns a function restoring the previous hook.
func SetPortfolioReadHook(fn func()) (restore func()) {
	old := portfolioReadHook
	portfolioReadHook = fn
	return func() { portfolioReadHook = old }
}
