package arena

import "unicode"

// ConfusablesRepertoire is, for tests, the characters a name may hold.
func ConfusablesRepertoire() *unicode.RangeTable { return confusablesRepertoire }

// ExtraConfusables is, for tests, the look-alikes mapped beyond UTS #39's.
func ExtraConfusables() map[rune]string { return extraConfusables }
