package config

// PolicyNames are the values a rule's policy accepts, for the man page's
// check that it describes each.
func PolicyNames() []string {
	out := make([]string, len(policies))
	for i, p := range policies {
		out[i] = string(p)
	}
	return out
}
