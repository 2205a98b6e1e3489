package cpumask

// MarshalText is m in the list format, "0-3,8" (String): the form /plan
// and /status show a mask in, and "" for the empty set.
func (m Mask) MarshalText() ([]byte, error) { return []byte(m.String()), nil }

// UnmarshalText parses the list format (ParseList) into m; malformed
// text leaves m unchanged and returns ParseList's error, which quotes it.
func (m *Mask) UnmarshalText(b []byte) error {
	p, err := ParseList(string(b))
	if err != nil {
		return err
	}
	*m = p
	return nil
}

// IsZero reports whether m is empty: a field tagged omitzero is left
// out of JSON when it is.
func (m Mask) IsZero() bool { return m.IsEmpty() }
