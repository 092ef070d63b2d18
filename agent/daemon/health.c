#include "daemon/health.h"

#include <arpa/inet.h>
#include <errno.h>
#include <microhttpd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/agent.h"
#include "lib/log.h"

/* The loop turns at least every 100 ms; stalled this long, it is not alive. */
#define ALIVE_MS 5000

struct health {
	struct MHD_Daemon *d;
	struct agent *a;
	const int *kubelet_up;  /* NULL: not following a kubelet */
};

struct text {
	char *buf;
	size_t len, cap;
};

static void add(struct text *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void add(struct text *t, const char *fmt, ...)
{
	va_list ap;
	int n;

	for (;;) {
		va_start(ap, fmt);
		n = vsnprintf(t->buf ? t->buf + t->len : NULL, t->buf ? t->cap - t->len : 0, fmt, ap);
		va_end(ap);
		if (n < 0)
			return;
		if (t->buf && t->len + (size_t)n < t->cap) {
			t->len += (size_t)n;
			return;
		}
		size_t cap = (t->cap ? t->cap : 4096) * 2 + (size_t)n;
		char *more = realloc(t->buf, cap);

		if (!more)
			return; /* the text so far stays */
		t->buf = more, t->cap = cap;
	}
}

static void metric(struct text *t, const char *name, const char *type, const char *help,
		   unsigned long long v)
{
	add(t, "# HELP nvmirage_%s %s\n# TYPE nvmirage_%s %s\nnvmirage_%s %llu\n", name, help,
	    name, type, name, v);
}

/* Every unredirected lookup, by cause: one family, a sample a cause. */
static void unredirected(struct text *t, const struct nvm_kstats *k)
{
	const struct {
		const char *cause;
		unsigned long long n;
	} by[] = {
		{ "deadline", k->deadline_misses - k->cpus_held - k->answer_limit - k->agent_gone },
		{ "cpus_held", k->cpus_held },
		{ "answer_limit", k->answer_limit },
		{ "agent_gone", k->agent_gone },
		{ "busy_no_cpu", k->busy_no_cpu },
		{ "busy_no_slot", k->busy_no_slot },
		{ "busy_no_bell", k->busy_no_bell },
		{ "busy_gave_way", k->busy_gave_way },
		{ "agent_failed", k->agent_failed },
	};

	add(t, "# HELP nvmirage_unredirected_total Path lookups of target tasks that went on "
	       "with the node's own files, by cause.\n# TYPE nvmirage_unredirected_total counter\n");
	for (size_t i = 0; i < sizeof(by) / sizeof(by[0]); i++)
		add(t, "nvmirage_unredirected_total{cause=\"%s\"} %llu\n", by[i].cause, by[i].n);
}

static char *metrics(struct health *h, size_t *len)
{
	struct text t = { 0 };
	struct nvm_kstats k;
	struct nvm_astats s;

	engine_stats(h->a->engine, &k, &s);
	metric(&t, "ready", "gauge", "1 once the BPF programs are attached.", 1);
	metric(&t, "gpus", "gauge", "GPUs in the profile.", h->a->model.ngpus);
	metric(&t, "targets", "gauge", "Target cgroups.", h->a->ntargets);
	metric(&t, "redirects_total", "counter",
	       "Path lookups of target tasks redirected into the tree.", k.rewritten + k.shared);
	metric(&t, "deadline_misses_total", "counter",
	       "Waits for the agent that ran out: the syscall went on unredirected.",
	       k.deadline_misses);
	metric(&t, "unredirected_busy_total", "counter",
	       "Matching lookups that could not wait (no slot or no CPU for the agent).",
	       k.slot_busy);
	unredirected(&t, &k);
	metric(&t, "agent_errors_total", "counter",
	       "Requests the agent could not do (memory not as expected, I/O).", s.errors);
	metric(&t, "realtime_threads", "gauge", "Patch service threads running SCHED_FIFO.",
	       s.realtime_threads);
	if (h->kubelet_up)
		metric(&t, "kubelet_up", "gauge", "1 while the kubelet's PodResources API answers.",
		       *h->kubelet_up == 1);
#define K(f) add(&t, "nvmirage_kernel_%s_total %llu\n", #f, (unsigned long long)k.f);
	NVM_KSTATS_FIELDS(K)
#undef K
#define A(f) add(&t, "nvmirage_agent_%s %llu\n", #f, (unsigned long long)s.f);
	NVM_ASTATS_FIELDS(A)
#undef A
	*len = t.len;
	return t.buf;
}

static enum MHD_Result reply(struct MHD_Connection *c, unsigned code, const char *type,
			     char *body, size_t len, enum MHD_ResponseMemoryMode mode)
{
	struct MHD_Response *r = MHD_create_response_from_buffer(len, body, mode);
	enum MHD_Result ret;

	if (!r)
		return MHD_NO;
	MHD_add_response_header(r, "Content-Type", type);
	ret = MHD_queue_response(c, code, r);
	MHD_destroy_response(r);
	return ret;
}

static enum MHD_Result answer(void *cls, struct MHD_Connection *c, const char *url,
			      const char *method, const char *version, const char *data,
			      size_t *data_len, void **state)
{
	struct health *h = cls;
	static char ok[] = "ok\n", stalled[] = "the agent's loop has stalled\n",
		    notready[] = "not attached\n", missing[] = "not found\n";
	bool alive = mono_ms() - h->a->last_turn_ms < ALIVE_MS;
	size_t len;
	char *m;

	(void)version, (void)data, (void)data_len, (void)state;
	if (strcmp(method, "GET") && strcmp(method, "HEAD"))
		return reply(c, MHD_HTTP_METHOD_NOT_ALLOWED, "text/plain", missing,
			     sizeof(missing) - 1, MHD_RESPMEM_PERSISTENT);
	if (!strcmp(url, "/healthz"))
		return alive ? reply(c, 200, "text/plain", ok, 3, MHD_RESPMEM_PERSISTENT)
			     : reply(c, 503, "text/plain", stalled, sizeof(stalled) - 1,
				     MHD_RESPMEM_PERSISTENT);
	if (!strcmp(url, "/readyz"))
		return alive && h->a->engine
			       ? reply(c, 200, "text/plain", ok, 3, MHD_RESPMEM_PERSISTENT)
			       : reply(c, 503, "text/plain", notready, sizeof(notready) - 1,
				       MHD_RESPMEM_PERSISTENT);
	if (!strcmp(url, "/metrics") && (m = metrics(h, &len)))
		return reply(c, 200, "text/plain; version=0.0.4", m, len, MHD_RESPMEM_MUST_FREE);
	return reply(c, 404, "text/plain", missing, sizeof(missing) - 1, MHD_RESPMEM_PERSISTENT);
}

struct health *health_start(const char *addr, struct agent *a, const int *kubelet_up)
{
	struct sockaddr_in sa = { .sin_family = AF_INET };
	char host[64];
	const char *colon = strrchr(addr, ':');
	char *end;
	long port = colon ? strtol(colon + 1, &end, 10) : -1;
	struct health *h;

	if (!colon || *end || port < 1 || port > 65535 || (size_t)(colon - addr) >= sizeof(host)) {
		nvm_err("--listen %s: give HOST:PORT, e.g. 0.0.0.0:9400", addr);
		return NULL;
	}
	snprintf(host, sizeof(host), "%.*s", (int)(colon - addr), addr);
	if (inet_pton(AF_INET, host, &sa.sin_addr) != 1) {
		nvm_err("--listen %s: %s is not an IPv4 address", addr, host);
		return NULL;
	}
	sa.sin_port = htons((uint16_t)port);
	h = calloc(1, sizeof(*h));
	if (!h)
		return NULL;
	h->a = a, h->kubelet_up = kubelet_up;
	h->d = MHD_start_daemon(MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_ERROR_LOG, 0, NULL, NULL,
				answer, h, MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&sa,
				MHD_OPTION_CONNECTION_TIMEOUT, 10u, MHD_OPTION_END);
	if (!h->d) {
		nvm_err("--listen %s: cannot serve there (%s)", addr, strerror(errno));
		free(h);
		return NULL;
	}
	nvm_info("serving /healthz, /readyz and /metrics on http://%s", addr);
	return h;
}

void health_stop(struct health *h)
{
	if (!h)
		return;
	MHD_stop_daemon(h->d);
	free(h);
}
