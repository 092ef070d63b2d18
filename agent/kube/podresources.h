/* Which pods hold devices of given resources, from the kubelet's
 * PodResources v1 API. */
#ifndef NVM_PODRESOURCES_H
#define NVM_PODRESOURCES_H

#include <stddef.h>

struct gpu_pod {
	char ns[256];
	char name[256];
	unsigned devices; /* device ids of the resources, over all containers */
};

struct gpu_pods {
	struct gpu_pod *p;
	unsigned n;
};

/* Lists the pods with a container that holds at least one device of any
 * of the nres resource names. Returns 0, or -1 with err. */
int podresources_gpu_pods(const char *socket_path, const char *const *resources, unsigned nres,
			  int timeout_ms, struct gpu_pods *out, char *err, size_t errlen);
void gpu_pods_free(struct gpu_pods *p);

#endif
