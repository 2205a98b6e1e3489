package prometheus

import (
	"os"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// exampleTarget is scrape.yml's one target, which the live test
// replaces by its daemon's address.
const exampleTarget = "192.0.2.10:9768"

// scrapeJob is scrape.yml with exampleTarget replaced by target.
func scrapeJob(t *testing.T, target string) string {
	t.Helper()
	b, err := os.ReadFile("scrape.yml")
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(b), exampleTarget); n != 2 { // the target and the comment naming it
		t.Fatalf("scrape.yml names %s %d times, want twice (the target and the comment)", exampleTarget, n)
	}
	return strings.Replace(string(b), `"`+exampleTarget+`"`, `"`+target+`"`, 1)
}

// TestScrapeJob: scrape.yml is one job named numairqd, the job the
// rules expect, with exampleTarget as its one static target; and the
// rules file points at it.
func TestScrapeJob(t *testing.T) {
	var doc struct {
		ScrapeConfigs []struct {
			JobName       string `yaml:"job_name"`
			StaticConfigs []struct {
				Targets []string `yaml:"targets"`
			} `yaml:"static_configs"`
		} `yaml:"scrape_configs"`
	}
	job := scrapeJob(t, "127.0.0.1:1")
	if err := yaml.Unmarshal([]byte(job), &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.ScrapeConfigs) != 1 || doc.ScrapeConfigs[0].JobName != "numairqd" || len(doc.ScrapeConfigs[0].StaticConfigs) != 1 ||
		strings.Join(doc.ScrapeConfigs[0].StaticConfigs[0].Targets, " ") != "127.0.0.1:1" {
		t.Errorf("scrape.yml with its target replaced: %+v, want one job numairqd with the one target 127.0.0.1:1", doc)
	}
	rules, err := os.ReadFile("numairqd.rules.yml")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(rules), `up{job="numairqd"}`) || !strings.Contains(string(rules), "deploy/prometheus/scrape.yml") {
		t.Error(`numairqd.rules.yml: no up{job="numairqd"} or no pointer to deploy/prometheus/scrape.yml`)
	}
}
