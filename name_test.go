package arena_test

import (
	"bufio"
	"compress/gzip"
	"os"
	"strconv"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/mtibben/confusables"
	"golang.org/x/text/secure/precis"
	"golang.org/x/text/unicode/norm"

	"github.com/forecast-arena/arena"
)

// Names that are one name: case, compatibility forms and look-alike
// characters of other scripts or of the same script; and names that look
// different enough to be two.
func TestSameName(t *testing.T) {
	cases := []struct {
		name, a, b string
		same       bool
	}{
		{"case", "Ada", "ADA", true},
		{"full-width letters", "Ada", "Ａｄａ", true},
		{"spaces collapsed", "Ada Lovelace", " Ada\u00a0 Lovelace ", true},
		{"Greek capital alpha", "Ada", "Αda", true},
		{"Cyrillic capital a", "Ada", "Аda", true},
		{"Cyrillic a in a baseline's name", "Random (uniform)", "Rаndom (uniform)", true},
		{"Cyrillic capital em in a baseline's name", "Market (benchmark)", "Маrket (benchmark)", true},
		{"whole word in Cyrillic", "Cope", "Соре", true},
		{"Cyrillic capital en, which folds apart from h", "Hello", "Нello", true},
		{"rn for m", "Market (benchmark)", "Market (benchrnark)", true},
		{"capital I for l", "lda", "Ida", true},
		{"digit 0 for O", "Olga", "0lga", true},
		{"digit 1 for l", "Agentl", "Agent1", true},
		{"mathematical letters", "paypal", "𝔭𝒶ỿ𝕡𝕒ℓ", true},
		{"digit 0 for o: a baseline's id", "random", "rand0m", true},
		{"digit 0 for o: a baseline's name", "Random (uniform)", "Rand0m (unif0rm)", true},
		{"digit 0 for o, folded first", "Bob", "B0b", true},
		{"Bengali digit zero for o", "Bob", "B\u09E6b", true},
		{"Oriya letter tha for o", "Bob", "B\u0B20b", true},
		{"Oriya digit zero for o", "Bob", "B\u0B66b", true},
		{"kra for k", "market", "mar\u0138et", true},
		{"Cyrillic ka for k (through kra)", "market", "mar\u043Aet", true},
		{"small capital K for k", "Market", "Mar\u1D0Bet", true},
		{"small capital R for r", "random", "\u0280andom", true},
		{"small capital A for a", "Market", "M\u1D00rket", true},
		{"flattened parentheses", "Market (benchmark)", "Market \u27EEbenchmark\u27EF", true},
		{"ornament parentheses, flattened", "Market (benchmark)", "Market \u276Abenchmark\u276B", true},
		{"tortoise shell brackets", "Market (benchmark)", "Market \u2997benchmark\u2998", true},
		{"white tortoise shell brackets", "Market (benchmark)", "Market \u27ECbenchmark\u27ED", true},
		{"white parentheses for double ones", "Market ((benchmark))", "Market \u2985benchmark\u2986", true},
		{"digit 1 and capital I for l, folded", "Lily", "1I1y", true},
		{"small capital M for m (through turned w)", "market", "\u1D0Darket", true},
		{"Cyrillic em for m (through turned w)", "Random", "Rando\u043C", true},
		{"dotless j for j", "Jojo", "Jo\u0237o", true},
		{"another name", "Ada", "Bob", false},
		{"a digit 0 where no o is", "Bob", "B0", false},
		{"an accent", "Ada", "Adà", false},
		{"a letter more", "Ada", "Adda", false},
		{"lowercase i is not l", "ida", "lda", false},
	}
	for _, c := range cases {
		if got := arena.SameName(c.a, c.b); got != c.same {
			t.Errorf("%s: SameName(%q, %q) = %v, want %v", c.name, c.a, c.b, got, c.same)
		}
		if got := arena.SameName(c.b, c.a); got != c.same {
			t.Errorf("%s: not symmetric", c.name)
		}
	}
	var set arena.NameSet
	if _, ok := set.Holder("Ada"); ok {
		t.Fatal("the empty set holds a name")
	}
	set.Add("Ada", "0xA")
	set.Add("ADA", "0xB") // one with Ada: keeps its first holder
	for _, n := range []string{"Ada", "ada", "Αda", "ADA"} {
		if h, ok := set.Holder(n); !ok || h != "0xA" {
			t.Errorf("holder of %q: %q %v, want 0xA", n, h, ok)
		}
	}
	if h, ok := set.Holder("Bob"); ok {
		t.Errorf("Bob is held by %s", h)
	}
}

// The script mixes a name may use: one script (with digits, punctuation
// and marks, which go with any), Latin with one other common script but
// Cyrillic and Greek, and Latin with the East Asian mixes.
func TestNameScripts(t *testing.T) {
	cases := []struct {
		name, s string
		scripts string
		ok      bool
	}{
		{"Latin", "Ada Lovelace 2", "Latin", true},
		{"digits and punctuation only", "42 (7)", "", true},
		{"Cyrillic alone", "Анна", "Cyrillic", true},
		{"Greek alone", "Αλφα", "Greek", true},
		{"Latin with an accent", "Zoë", "Latin", true},
		{"Latin with Devanagari", "GPT ठाकुर", "Devanagari Latin", true},
		{"Latin with Arabic", "Model عربي", "Arabic Latin", true},
		{"Japanese with Latin", "GPT 予測エージェント です", "Han Hiragana Katakana Latin", true},
		{"Korean with Han and Latin", "AI 예측 漢字", "Han Hangul Latin", true},
		{"Chinese with Bopomofo", "預測 ㄅ", "Bopomofo Han", true},
		{"Latin with Cyrillic", "Аda", "Cyrillic Latin", false},
		{"Latin with Greek", "Αda", "Greek Latin", false},
		{"Latin with Cherokee (not a recommended script)", "Ada Ꭺ", "Cherokee Latin", false},
		{"Latin with two other scripts", "Ada ठा عر", "Arabic Devanagari Latin", false},
		{"Hangul with Katakana", "예측 エ", "Hangul Katakana", false},
		{"Cyrillic with Greek", "Анна Αλφα", "Cyrillic Greek", false},
	}
	for _, c := range cases {
		scripts, ok := arena.NameScripts(c.s)
		if got := strings.Join(scripts, " "); got != c.scripts || ok != c.ok {
			t.Errorf("%s: NameScripts(%q) = %q %v, want %q %v", c.name, c.s, got, ok, c.scripts, c.ok)
		}
	}
}

// Names that could pass for an address or a part of one, look-alikes
// counted; and names with digits that could not.
func TestAddressLike(t *testing.T) {
	addr := "0x71C7656EC7ab88b098defB751B7401B5f6d8976F"
	cases := []struct {
		name, s string
		like    bool
	}{
		{"an address cut to 38 hex digits", addr[:40], true},
		{"an address without 0x", addr[2:40], true},
		{"a shortened address", "0x71C7…976F", true},
		{"0x and 4 hex digits", "Bot 0xbeef", true},
		{"capital O for 0", "Ox71C7656EC7ab88b098defB751B7401B5f6d89", true},
		{"multiplication sign for x", "0×71C7 agent", true},
		{"16 hex digits in a row", "deadbeefcafebabe", true},
		{"16 digits in a row", "1234567890123456", true},
		{"0x and 3 hex digits", "Bot 0xabc", false},
		{"0x and a word", "0xAgent", false},
		{"a date", "Claude 3.5 Sonnet 20241022", false},
		{"15 hex digits", "deadbeefcafebab", false},
		{"a plain name", "Ada Lovelace", false},
		{"a word with x", "Oxford Forecasting", false},
	}
	for _, c := range cases {
		if got := arena.AddressLike(c.s); got != c.like {
			t.Errorf("%s: AddressLike(%q) = %v, want %v", c.name, c.s, got, c.like)
		}
	}
}

// CheckName: each rule with a name it refuses, and names it admits; the
// names are in the normal form CheckProfile asks for.
func TestCheckName(t *testing.T) {
	cases := []struct {
		name, s string
		err     string // part of the error; "" admitted
	}{
		{"Latin", "Ada Lovelace", ""},
		{"Japanese", "予測エージェント", ""},
		{"a character of Unicode 14 (Latin capital Old Polish O)", "\ua7c0la", "newer than Unicode 13.0.0"},
		{"Greek and Latin", "Αda", "mixes the scripts Greek, Latin"},
		{"Cyrillic and Latin in a baseline's name", "Маrket (benchmark)", "mixes the scripts Cyrillic, Latin"},
		{"an address cut short", "0x71C7656EC7ab88b098defB751B7401B5f6d897", "could pass for an address"},
		{"a braille blank after a taken name", "Ada\u2800", "shows nothing"},
		{"a musical null notehead after a taken name", "Ada\U0001D159", "shows nothing"},
		{"a mark twice", "Ada\u0308\u0308", "one mark twice"},
		{"five marks on a letter", "Ada\u0300\u0301\u0302\u0303\u0304", "more than 4 combining marks"},
		{"four marks on a letter", "Ada\u0300\u0301\u0302\u0303", ""},
		{"Devanagari with its vowel signs", "ठाकुर", ""},
	}
	for _, c := range cases {
		err := arena.CheckName(c.s)
		switch {
		case c.err == "" && err != nil:
			t.Errorf("%s: %q refused: %v", c.name, c.s, err)
		case c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)):
			t.Errorf("%s: %q: %v, want an error with %q", c.name, c.s, err, c.err)
		}
	}
}

// The folded key is a fixed point of its own steps for every character a
// name may hold: folding and mapping it once more changes nothing, so two
// names one with a third are one with each other; and a character's
// case variants (upper, lower, title case) share it, Cherokee's included,
// whose capitals and small letters x/text's folding swaps back and forth.
// (But for capital I with dot above, whose simple lower case "i" drops
// the dot its case folding keeps: "İ" folds to "i̇".)
func TestFoldedSkeletonStable(t *testing.T) {
	n := 0
	for r := rune(0); r <= unicode.MaxRune; r++ {
		if !unicode.Is(arena.ConfusablesRepertoire(), r) || !utf8.ValidRune(r) {
			continue
		}
		n++
		name := "a" + string(r) + "b"
		f, _ := arena.NameKeys(name)
		if again, _ := arena.NameKeys(f); again != f {
			t.Errorf("%U: folded key %+q, again %+q", r, f, again)
		}
		for _, v := range []rune{unicode.ToUpper(r), unicode.ToLower(r), unicode.ToTitle(r)} {
			if r == 'İ' {
				break
			}
			if fv, _ := arena.NameKeys("a" + string(v) + "b"); v != r && unicode.Is(arena.ConfusablesRepertoire(), v) && fv != f {
				t.Errorf("%U and its case variant %U: folded keys %+q and %+q", r, v, f, fv)
			}
		}
	}
	if n < 100000 {
		t.Fatalf("checked %d characters", n)
	}
}

// The name keys against UTS #39's own data (confusables.txt of the
// version the keys use, kept in testdata/uts39): for each of its 6,311
// mappings, arena.Skeleton of the source is the skeleton UTS #39 defines
// (NFD, each character mapped by the file, NFD again; then the arena's
// extra look-alikes), so the module's table is the file's; and where UTS
// #39 deems source and target confusable (equal skeletons) and both may
// stand in a name (each its own PRECIS nickname form: a name in another
// form is refused before its keys matter), they are one name, alone and
// inside a word, in either order.
func TestUTS39Confusables(t *testing.T) {
	pairs := readConfusables(t, "testdata/uts39/confusables-13.0.0.txt.gz")
	if len(pairs) != 6311 {
		t.Fatalf("read %d mappings, want the file's 6311", len(pairs))
	}
	table := map[rune]string{}
	for _, p := range pairs {
		table[[]rune(p.src)[0]] = p.dst
	}
	mapWith := func(s string, m map[rune]string) string {
		var b strings.Builder
		for _, r := range s {
			if to, ok := m[r]; ok {
				b.WriteString(to)
			} else {
				b.WriteRune(r)
			}
		}
		return b.String()
	}
	spec := func(s string) string {
		return norm.NFD.String(mapWith(norm.NFD.String(mapWith(norm.NFD.String(s), table)), arena.ExtraConfusables()))
	}
	named := 0
	for _, p := range pairs {
		if got, want := arena.Skeleton(p.src), spec(p.src); got != want {
			t.Errorf("line %d: skeleton of %+q is %+q, UTS #39's %+q", p.line, p.src, got, want)
		}
		nameForm := func(s string) bool { n, err := precis.Nickname.String(s); return err == nil && n == s }
		if spec(p.src) != spec(p.dst) || !nameForm("x"+p.src+"y") || !nameForm("x"+p.dst+"y") {
			continue
		}
		named++
		for _, w := range [][2]string{{p.src, p.dst}, {"x" + p.src + "y", "x" + p.dst + "y"}} {
			if !arena.SameName(w[0], w[1]) || !arena.SameName(w[1], w[0]) {
				t.Errorf("line %d: %+q and %+q are two names", p.line, w[0], w[1])
			}
		}
	}
	if named < 1900 {
		t.Errorf("only %d mappings between characters a name may hold", named)
	}
	t.Logf("%d mappings checked as names", named)
}

// The look-alikes mapped beyond UTS #39 map to its prototypes: each
// target is its own skeleton, so the exact key, taken once, is as final
// as the folded one, and none is a character UTS #39 already maps.
func TestExtraConfusables(t *testing.T) {
	for r, to := range arena.ExtraConfusables() {
		if got := confusables.Skeleton(to); got != to {
			t.Errorf("%U maps to %q, whose skeleton is %q", r, to, got)
		}
		if got := confusables.Skeleton(string(r)); got != string(r) {
			t.Errorf("%U: UTS #39 maps it to %q already", r, got)
		}
	}
}

type confusablePair struct {
	line     int
	src, dst string
}

// readConfusables reads the mappings of a gzipped confusables.txt: lines
// "SOURCE ; TARGET… ; MA # comment", code points in hex.
func readConfusables(t *testing.T, path string) []confusablePair {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	var out []confusablePair
	sc := bufio.NewScanner(zr)
	hexRunes := func(s string) string {
		var b strings.Builder
		for _, h := range strings.Fields(s) {
			v, err := strconv.ParseUint(h, 16, 32)
			if err != nil {
				t.Fatalf("%s: code point %q", path, h)
			}
			b.WriteRune(rune(v))
		}
		return b.String()
	}
	for n := 1; sc.Scan(); n++ {
		line, _, _ := strings.Cut(strings.TrimPrefix(sc.Text(), "\uFEFF"), "#")
		fields := strings.Split(line, ";")
		if len(fields) < 3 {
			continue
		}
		out = append(out, confusablePair{n, hexRunes(fields[0]), hexRunes(fields[1])})
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}
