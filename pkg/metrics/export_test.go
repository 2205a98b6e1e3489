package metrics

import "github.com/prometheus/client_golang/prometheus"

// Gatherer is the private registry, for the tests' testutil calls.
func (m *Metrics) Gatherer() prometheus.Gatherer { return m.reg }
