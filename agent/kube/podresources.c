#include "kube/podresources.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kube/grpc_unary.h"
#include "podresources.pb-c.h"

#define LIST_METHOD "/v1.PodResourcesLister/List"

static unsigned held_devices(const V1__PodResources *pr, const char *const *res, unsigned nres)
{
	unsigned n = 0;

	for (size_t c = 0; c < pr->n_containers; c++) {
		const V1__ContainerResources *cr = pr->containers[c];

		for (size_t d = 0; d < cr->n_devices; d++)
			for (unsigned r = 0; r < nres; r++)
				if (cr->devices[d]->resource_name &&
				    !strcmp(cr->devices[d]->resource_name, res[r]))
					n += (unsigned)cr->devices[d]->n_device_ids;
	}
	return n;
}

int podresources_gpu_pods(const char *socket_path, const char *const *resources, unsigned nres,
			  int timeout_ms, struct gpu_pods *out, char *err, size_t errlen)
{
	V1__ListPodResourcesRequest req = V1__LIST_POD_RESOURCES_REQUEST__INIT;
	V1__ListPodResourcesResponse *resp;
	uint8_t reqbuf[16], *buf = NULL;
	size_t len = 0, reqlen = v1__list_pod_resources_request__pack(&req, reqbuf);

	memset(out, 0, sizeof(*out));
	if (grpc_unary(socket_path, LIST_METHOD, reqbuf, reqlen, &buf, &len, timeout_ms, err,
		       errlen))
		return -1;
	resp = v1__list_pod_resources_response__unpack(NULL, len, buf);
	free(buf);
	if (!resp)
		return snprintf(err, errlen, "List: the response is not a ListPodResourcesResponse"),
		       -1;
	out->p = calloc(resp->n_pod_resources ? resp->n_pod_resources : 1, sizeof(*out->p));
	if (!out->p) {
		v1__list_pod_resources_response__free_unpacked(resp, NULL);
		return snprintf(err, errlen, "out of memory"), -1;
	}
	for (size_t i = 0; i < resp->n_pod_resources; i++) {
		const V1__PodResources *pr = resp->pod_resources[i];
		unsigned n = held_devices(pr, resources, nres);
		struct gpu_pod *g = &out->p[out->n];

		if (!n || !pr->name || !pr->namespace_)
			continue;
		snprintf(g->ns, sizeof(g->ns), "%s", pr->namespace_);
		snprintf(g->name, sizeof(g->name), "%s", pr->name);
		g->devices = n;
		out->n++;
	}
	v1__list_pod_resources_response__free_unpacked(resp, NULL);
	return 0;
}

void gpu_pods_free(struct gpu_pods *p)
{
	free(p->p);
	p->p = NULL;
	p->n = 0;
}
