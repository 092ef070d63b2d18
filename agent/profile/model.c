#include "profile/model.h"

void model_gpu_cpus(const struct nvm_model *m, const struct nvm_gpu *g,
		    const struct nvm_cpuset *online, struct nvm_cpuset *out)
{
	model_root_cpus(m, g->root, online, out);
}

void model_root_cpus(const struct nvm_model *m, int root, const struct nvm_cpuset *online,
		     struct nvm_cpuset *out)
{
	*out = m->roots[root].cpus;
	if (!online)
		return;
	cpuset_and(out, online);
	if (cpuset_empty(out))
		*out = *online;
}
