/* HTTP endpoints for Kubernetes probes and Prometheus: /healthz (the
 * agent's loop turns), /readyz (the BPF programs are attached), /metrics. */
#ifndef NVM_HEALTH_H
#define NVM_HEALTH_H

struct agent;
struct health;

/* Serves on addr ("HOST:PORT", IPv4) in a thread of its own. kubelet_up,
 * when not NULL, is the gauge of a kubelet being followed (1: it answers),
 * read as the metrics are asked for. Returns NULL after reporting when the
 * address is bad or taken. */
struct health *health_start(const char *addr, struct agent *a, const int *kubelet_up);
void health_stop(struct health *h);

#endif
