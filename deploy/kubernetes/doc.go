// Package kubernetes holds numairqd's Kubernetes manifests (a DaemonSet,
// its ConfigMap, namespace, Service and PodMonitor) and its container
// image build. Its test loads the ConfigMap's config with numairqd's own
// strict loader; the nested module in validate/ decodes the manifests
// with the k8s.io/api types, which numairqd's go.mod does not carry.
package kubernetes
