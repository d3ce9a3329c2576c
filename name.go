package arena

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"unicode"

	"github.com/mtibben/confusables"
	"golang.org/x/text/cases"
	"golang.org/x/text/secure/precis"
	"golang.org/x/text/unicode/norm"
	"golang.org/x/text/unicode/rangetable"
)

// Agent names people can trust: one name per agent, never a look-alike
// of another's, of a baseline's or of an address. The server that admits
// a profile and the verifier that checks a published one apply these same
// functions.

// ConfusablesVersion is the Unicode version of the confusables data
// (UTS #39's confusables.txt, as github.com/mtibben/confusables ships it)
// that NameKeys maps names with. A name may hold only characters assigned
// by that version, so that every character of a name has had its
// look-alikes listed.
const ConfusablesVersion = "13.0.0"

var confusablesRepertoire = rangetable.Assigned(ConfusablesVersion)

// NameKeys returns the two keys an agent's name is unique under: two
// names are one name when either key is equal. Both start from the PRECIS
// nickname form (RFC 8266: NFKC, spaces mapped and collapsed) and end in
// a confusable skeleton (see Skeleton), which maps each character to the
// one it can pass for ("Аda" in Cyrillic, "Αda" in Greek and "Ada" share
// one). folded is the skeleton after case folding, taken again until it
// no longer changes: a look-alike may be an upper-case letter ("0" and
// Bengali "০" pass for "O", which folds to "o"), so folding once before
// mapping would keep "rand0m" apart from "random"; with the steps
// repeated, "ADA", "ada", "Ａｄａ" and "rand0m"/"random" are one name.
// exact is the skeleton of the name as written, since some look-alikes
// differ in case only ("Ida" and "lda", "Olga" and "0lga", Cyrillic "М"
// and "M" fold apart but look alike unfolded). A name PRECIS refuses
// keeps its own characters (such a name is refused before it is stored;
// this keeps the keys total).
func NameKeys(name string) (folded, exact string) {
	k, err := precis.Nickname.CompareKey(name)
	if err != nil {
		k = name
	}
	e, err := precis.Nickname.String(name)
	if err != nil {
		e = name
	}
	return foldedSkeleton(k), Skeleton(e)
}

// maxFoldRounds bounds the fold-and-map rounds of foldedSkeleton; every
// character reaches its loop within 4 rounds ("%" takes the most: its
// skeleton is "º/₀", which folds and maps to "o/O", then "o/o", then
// "o/o" again; TestFoldedSkeletonStable checks the whole repertoire).
const maxFoldRounds = 8

// foldedSkeleton case-folds s, maps it to NFKC and takes its Skeleton,
// again until a result repeats, and returns the least string of that
// loop: the fixed point, for most names. The loop can be longer than one:
// x/text's case folding takes Cherokee capitals (U+13A0–) to the small
// letters (U+AB70–) and those back, so without a choice within the loop
// a name and its case variant would get keys as different as an odd and
// an even number of rounds.
func foldedSkeleton(s string) string {
	seen := []string{s}
	for range maxFoldRounds {
		s = Skeleton(norm.NFKC.String(cases.Fold().String(s)))
		if i := slices.Index(seen, s); i >= 0 {
			return slices.Min(seen[i:])
		}
		seen = append(seen, s)
	}
	return s
}

// Skeleton is the UTS #39 confusable skeleton of s (NFD, each character
// mapped to its prototype by confusables.txt of Unicode
// ConfusablesVersion, NFD again), with the look-alikes that data does
// not list (extraConfusables) mapped too.
func Skeleton(s string) string {
	s = confusables.Skeleton(s)
	if !strings.ContainsFunc(s, func(r rune) bool { _, ok := extraConfusables[r]; return ok }) {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		if to, ok := extraConfusables[r]; ok {
			b.WriteString(to)
		} else {
			b.WriteRune(r)
		}
	}
	return norm.NFD.String(b.String())
}

// extraConfusables are look-alikes that UTS #39's confusables.txt (of
// ConfusablesVersion) does not map to what they pass for, each mapped
// after its data, to a prototype of its own. They read as the letter or
// bracket they are drawn like at the sizes names are shown in:
//   - the Latin small capitals the data leaves unmapped, and kra ("ĸ",
//     drawn as a small capital K, the data's prototype for Greek kappa
//     and Cyrillic ka) and turned w ("ʍ", its prototype for small capital
//     M), as their letters; dotless j as j;
//   - parenthesis-like brackets (flattened, ornament, tortoise shell
//     and white parentheses) as parentheses.
var extraConfusables = map[rune]string{
	'\u0138': "k",  // ĸ LATIN SMALL LETTER KRA
	'\u1D00': "a",  // ᴀ
	'\u0299': "b",  // ʙ
	'\u1D05': "d",  // ᴅ
	'\u1D07': "e",  // ᴇ
	'\uA730': "f",  // ꜰ
	'\u0262': "g",  // ɢ
	'\u029C': "h",  // ʜ
	'\u1D0A': "j",  // ᴊ
	'\u029F': "l",  // ʟ
	'\u0274': "n",  // ɴ
	'\u1D18': "p",  // ᴘ
	'\uA7AF': "q",  // ꞯ
	'\u0280': "r",  // ʀ
	'\u1D1B': "t",  // ᴛ
	'\u028D': "rn", // ʍ, the data's prototype for small capital M (ᴍ) and Cyrillic м: as m, whose skeleton is "rn"
	'\u0237': "j",  // ȷ dotless j, as the data maps dotless i to i
	'\u27EE': "(",  // ⟮ MATHEMATICAL LEFT FLATTENED PARENTHESIS
	'\u27EF': ")",  // ⟯ MATHEMATICAL RIGHT FLATTENED PARENTHESIS
	'\u276A': "(",  // ❪ MEDIUM FLATTENED LEFT PARENTHESIS ORNAMENT
	'\u276B': ")",  // ❫
	'\u27EC': "(",  // ⟬ MATHEMATICAL LEFT WHITE TORTOISE SHELL BRACKET
	'\u27ED': ")",  // ⟭
	'\u2997': "(",  // ⦗ LEFT BLACK TORTOISE SHELL BRACKET
	'\u2998': ")",  // ⦘
	'\u2985': "((", // ⦅ LEFT WHITE PARENTHESIS, as the data maps ⸨
	'\u2986': "))", // ⦆
}

// SameName reports whether a and b are one name (see NameKeys).
func SameName(a, b string) bool {
	af, ae := NameKeys(a)
	bf, be := NameKeys(b)
	return af == bf || ae == be
}

// NameSet is a set of taken names and who holds each, compared as
// SameName compares names. The zero NameSet is empty.
type NameSet struct {
	holders map[string]string // "f" or "e" + key → holder
}

// Holder returns who holds a name that is one with name.
func (s *NameSet) Holder(name string) (string, bool) {
	f, e := NameKeys(name)
	if h, ok := s.holders["f"+f]; ok {
		return h, true
	}
	h, ok := s.holders["e"+e]
	return h, ok
}

// Add records holder as holding name (and every name one with it); a
// name already held keeps its first holder.
func (s *NameSet) Add(name, holder string) {
	if s.holders == nil {
		s.holders = map[string]string{}
	}
	f, e := NameKeys(name)
	for _, k := range []string{"f" + f, "e" + e} {
		if _, ok := s.holders[k]; !ok {
			s.holders[k] = holder
		}
	}
}

// CheckName applies the rules on what a name may look like, beyond its
// length and normal form: every character assigned by Unicode
// ConfusablesVersion and visible; no more than 4 combining marks on a
// character, nor one mark twice in a row (UTS #39's rule against marks
// stacked to hide or fake what they sit on); a script mix that is common
// (see NameScripts); and nothing an address could be mistaken for (see
// AddressLike). The error says which rule the name breaks, in words that
// follow the name.
func CheckName(name string) error {
	marks, prev := 0, rune(-1)
	for _, r := range name {
		switch {
		case !unicode.Is(confusablesRepertoire, r):
			return fmt.Errorf("holds %U, a character newer than Unicode %s, whose look-alikes this arena cannot tell", r, ConfusablesVersion)
		case r == '\u2800' || r == '\U0001D159':
			// The braille blank and the musical null notehead: the
			// characters that show nothing and that PRECIS admits (it
			// refuses the other invisible ones: spaces but U+0020,
			// formatting characters, default ignorables).
			return fmt.Errorf("holds %U, which shows nothing", r)
		case unicode.In(r, unicode.Mn, unicode.Me):
			if marks++; marks > 4 || r == prev {
				return fmt.Errorf("stacks more than 4 combining marks, or one mark twice, on a character (%U)", r)
			}
		default:
			marks = 0
		}
		prev = r
	}
	if scripts, ok := NameScripts(name); !ok {
		return fmt.Errorf("mixes the scripts %s: a name is written in one script, or in Latin with one other (not Cyrillic or Greek, whose letters pass for Latin ones), or in Latin, Han and Japanese kana, Bopomofo or Hangul", strings.Join(scripts, ", "))
	}
	if AddressLike(name) {
		return errors.New("could pass for an address: it holds 0x and 4 or more hexadecimal digits, or 16 or more hexadecimal digits in a row (counting look-alikes such as O for 0 and l for 1)")
	}
	return nil
}

// recommendedScripts are the scripts in common modern use (UAX #31,
// Table 4, Recommended Scripts), the ones a name may mix with Latin.
var recommendedScripts = map[string]bool{
	"Arabic": true, "Armenian": true, "Bengali": true, "Bopomofo": true, "Cyrillic": true, "Devanagari": true, "Ethiopic": true,
	"Georgian": true, "Greek": true, "Gujarati": true, "Gurmukhi": true, "Han": true, "Hangul": true, "Hebrew": true, "Hiragana": true,
	"Kannada": true, "Katakana": true, "Khmer": true, "Lao": true, "Latin": true, "Malayalam": true, "Myanmar": true, "Oriya": true,
	"Sinhala": true, "Tamil": true, "Telugu": true, "Thaana": true, "Thai": true, "Tibetan": true,
}

// eastAsianMixes are the script mixes East Asian writing uses every day,
// which UTS #39's highly restrictive level admits.
var eastAsianMixes = [][]string{{"Latin", "Han", "Hiragana", "Katakana"}, {"Latin", "Han", "Bopomofo"}, {"Latin", "Han", "Hangul"}}

// scriptNames are the scripts of the Unicode Script property, sorted.
var scriptNames = func() []string {
	var out []string
	for name := range unicode.Scripts {
		if name != "Common" && name != "Inherited" {
			out = append(out, name)
		}
	}
	slices.Sort(out)
	return out
}()

// scriptOf is r's script, "" for Common and Inherited (digits,
// punctuation, spaces, combining marks), which go with any script.
func scriptOf(r rune) string {
	switch {
	case r < 0x80:
		if 'a' <= r|0x20 && r|0x20 <= 'z' {
			return "Latin"
		}
		return ""
	case unicode.Is(unicode.Common, r) || unicode.Is(unicode.Inherited, r):
		return ""
	}
	for _, name := range scriptNames {
		if unicode.Is(unicode.Scripts[name], r) {
			return name
		}
	}
	return ""
}

// NameScripts returns the scripts a name is written in (by the Unicode
// Script property, without Common and Inherited), sorted, and whether
// their mix is common: UTS #39's moderately restrictive level. That is
// one script; or Latin with one other Recommended script but Cyrillic and
// Greek; or a part of Latin + Han + Hiragana + Katakana, Latin + Han +
// Bopomofo or Latin + Han + Hangul. It reads the Script property, not
// Script_Extensions, which Go does not ship: a character shared by a few
// scripts (an Arabic-Indic digit in Thaana text, say) counts as its main
// script only, so a rare mix is refused that the extensions would admit.
func NameScripts(name string) ([]string, bool) {
	var scripts []string
	for _, r := range name {
		if s := scriptOf(r); s != "" && !slices.Contains(scripts, s) {
			scripts = append(scripts, s)
		}
	}
	slices.Sort(scripts)
	if len(scripts) <= 1 {
		return scripts, true
	}
	for _, mix := range eastAsianMixes {
		if !slices.ContainsFunc(scripts, func(s string) bool { return !slices.Contains(mix, s) }) {
			return scripts, true
		}
	}
	if len(scripts) == 2 && slices.Contains(scripts, "Latin") {
		other := scripts[0]
		if other == "Latin" {
			other = scripts[1]
		}
		return scripts, recommendedScripts[other] && other != "Cyrillic" && other != "Greek"
	}
	return scripts, false
}

// AddressLike reports whether a name could pass for an address (a 0x
// and 40 hexadecimal digits, which the pages show for an agent without a
// name) or a part of one: it holds "0x" followed by 4 or more
// hexadecimal digits, or 16 or more hexadecimal digits in a row. It reads
// the name's exact skeleton (see NameKeys), so a look-alike counts as
// what it looks like: O and o for 0, l and I for 1, × and Cyrillic х
// for x.
func AddressLike(name string) bool {
	_, s := NameKeys(name)
	hexLike := func(r rune) bool {
		return '2' <= r && r <= '9' || 'a' <= r && r <= 'f' || 'A' <= r && r <= 'F' || r == 'O' || r == 'o' || r == 'l'
	}
	rs := []rune(s)
	run := 0
	for i, r := range rs {
		if !hexLike(r) {
			run = 0
			continue
		}
		if run++; run >= 16 {
			return true
		}
		if (r == 'O' || r == 'o') && i+5 < len(rs) && (rs[i+1] == 'x' || rs[i+1] == 'X') &&
			!slices.ContainsFunc(rs[i+2:i+6], func(r rune) bool { return !hexLike(r) }) {
			return true
		}
	}
	return false
}
