package config

import "strings"

// Closest returns the candidate a user most likely meant by word, or "" if
// none is close enough to be worth suggesting: the "did you mean" of
// pipeline keys and options here, and of commands, flags and tables in
// the floe command. A wrong suggestion is worse
// than none, so the bar is: same letters once case and -/_ are ignored
// (maxFilesPerTrigger, max_files_per_trigger), a prefix either way, an
// edit distance of at most 3 that is still less than half the word, or
// letters left out of a word at least half as long (jsn for jsonl).
func Closest(word string, candidates []string) string {
	if word == "" {
		return ""
	}
	norm := normalizeKey(word)
	best, bestScore := "", 1<<30
	for _, c := range candidates {
		nc := normalizeKey(c)
		var score int
		switch {
		case nc == norm:
			score = 0
		case len(norm) >= 3 && (strings.HasPrefix(nc, norm) || strings.HasPrefix(norm, nc)):
			// Ranked after close typos: "max-file" should find
			// "max-file-age" by prefix, but "max-file-per-trigger" is a
			// one-letter typo of "max-files-per-trigger".
			score = 4 + abs(len(nc)-len(norm))
		default:
			d := levenshtein(word, c)
			switch {
			case d <= 3 && 2*d < len(word):
				score = d
			case len(norm) >= 3 && 2*len(norm) >= len(nc) && norm[0] == nc[0] && isSubsequence(norm, nc):
				score = 8 + len(nc) - len(norm)
			default:
				continue
			}
		}
		if score < bestScore {
			best, bestScore = c, score
		}
	}
	return best
}

// isSubsequence tells whether a's letters appear in b in order.
func isSubsequence(a, b string) bool {
	i := 0
	for j := 0; i < len(a) && j < len(b); j++ {
		if a[i] == b[j] {
			i++
		}
	}
	return i == len(a)
}

func normalizeKey(s string) string {
	return strings.NewReplacer("-", "", "_", "", " ", "").Replace(strings.ToLower(s))
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

// levenshtein is the edit distance over runes with a swap of two
// neighbours counted as one edit (optimal string alignment), the commonest
// typo (sacn, checkpiont); keys are short, so nothing cleverer pays for
// itself.
func levenshtein(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	prev2 := make([]int, len(rb)+1)
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && ra[i-1] == rb[j-2] && ra[i-2] == rb[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(rb)]
}
