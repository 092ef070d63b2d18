/* HTTP endpoints for Kubernetes probes and Prometheus: /healthz (the
 * agent's loop turns), /readyz (the BPF programs are attached), /metrics. */
#ifndef NVM_HEALTH_H
#define NVM_HEALTH_H

struct agent;
struct kube;
struct health;

/* Serves on addr ("HOST:PORT", IPv4) in a thread of its own. Returns NULL
 * after reporting when the address is bad or taken. */
struct health *health_start(const char *addr, struct agent *a, struct kube *k);
void health_stop(struct health *h);

#endif
