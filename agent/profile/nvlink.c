/* nvlink: how the GPUs' NVLinks are wired, as Mokka's profiles describe it,
 * plus direct links between GPUs:
 *
 *   nvlink:
 *     version: 5            # NVLink generation
 *     links_per_gpu: 18
 *     switch_support: true  # or a non-empty `switches:` list: the links
 *                           # that go to no peer go to NVSwitches
 *     peers:                # GPU-to-GPU links (NVLink bridges), by index
 *       - {gpus: [0, 1], links: 4}
 *
 * Without switches or peers the links are down, as Mokka reads a profile
 * with switch_support false. */
#include <stdio.h>
#include <string.h>

#include "lib/log.h"
#include "profile/profile_int.h"

/* The position in m->gpus of the GPU with that index; -1 when --gpus or
 * num_devices left it out. */
static int position_of(const struct nvm_model *m, unsigned index)
{
	for (unsigned i = 0; i < m->ngpus; i++)
		if (m->gpus[i].index == index)
			return (int)i;
	return -1;
}

static int parse_peer(struct ydoc *y, yaml_node_t *e, size_t k, struct nvm_model *m)
{
	yaml_node_t *gpus = ydoc_get(y, e, "gpus"), *n = ydoc_get(y, e, "links");
	uint64_t idx[2], links;
	char path[64];
	int at[2];

	snprintf(path, sizeof(path), "nvlink.peers[%zu]", k);
	if (!ydoc_is_map(e))
		return ydoc_fail(y, e, path, "expected a mapping {gpus: [A, B], links: N}");
	snprintf(path, sizeof(path), "nvlink.peers[%zu].gpus", k);
	if (!ydoc_is_seq(gpus) || ydoc_seq_len(gpus) != 2)
		return ydoc_fail(y, gpus ? gpus : e, path, "expected two GPU indexes");
	for (int i = 0; i < 2; i++)
		if (ydoc_uint(y, ydoc_seq_at(y, gpus, (size_t)i), path, NVM_MAX_GPUS - 1, &idx[i]))
			return -1;
	if (idx[0] == idx[1])
		return ydoc_fail(y, gpus, path, "a GPU cannot be its own peer");
	snprintf(path, sizeof(path), "nvlink.peers[%zu].links", k);
	if (!n)
		return ydoc_fail(y, e, path, "missing (required)");
	if (ydoc_uint(y, n, path, NVM_MAX_NVLINKS, &links))
		return -1;
	if (!links)
		return ydoc_fail(y, n, path, "must be at least 1");
	at[0] = position_of(m, (unsigned)idx[0]);
	at[1] = position_of(m, (unsigned)idx[1]);
	if (at[0] < 0 || at[1] < 0)
		return 0; /* a GPU the profile does not put on this node */
	m->nvlink.peer[at[0]][at[1]] += (uint8_t)links;
	m->nvlink.peer[at[1]][at[0]] += (uint8_t)links;
	return 0;
}

/* No GPU may have more peer links than links. */
static int check_totals(struct ydoc *y, yaml_node_t *peers, const struct nvm_model *m)
{
	for (unsigned i = 0; i < m->ngpus; i++) {
		unsigned sum = 0;

		for (unsigned j = 0; j < m->ngpus; j++)
			sum += m->nvlink.peer[i][j];
		if (sum > m->nvlink.links)
			return ydoc_fail(y, peers, "nvlink.peers",
					 "GPU %u has %u peer links, more than links_per_gpu (%u)",
					 m->gpus[i].index, sum, m->nvlink.links);
	}
	return 0;
}

int parse_nvlink(struct ydoc *y, yaml_node_t *nv, struct nvm_model *m)
{
	yaml_node_t *n, *peers;
	uint64_t v;

	memset(&m->nvlink, 0, sizeof(m->nvlink));
	if (!nv)
		return 0;
	if (!ydoc_is_map(nv))
		return ydoc_fail(y, nv, "nvlink", "expected a mapping");
	n = ydoc_get(y, nv, "version");
	if (!n)
		return ydoc_fail(y, nv, "nvlink.version", "missing (required)");
	if (ydoc_uint(y, n, "nvlink.version", 5, &v))
		return -1;
	if (!v)
		return ydoc_fail(y, n, "nvlink.version", "must be 1..5");
	m->nvlink.version = (unsigned)v;
	n = ydoc_get(y, nv, "links_per_gpu");
	if (!n)
		return ydoc_fail(y, nv, "nvlink.links_per_gpu", "missing (required)");
	if (ydoc_uint(y, n, "nvlink.links_per_gpu", NVM_MAX_NVLINKS, &v))
		return -1;
	m->nvlink.links = (unsigned)v;
	n = ydoc_get(y, nv, "switch_support");
	if (n && ydoc_bool(y, n, "nvlink.switch_support", &m->nvlink.switched))
		return -1;
	n = ydoc_get(y, nv, "switches");
	if (n && !ydoc_is_seq(n))
		return ydoc_fail(y, n, "nvlink.switches", "expected a list");
	if (ydoc_seq_len(n))
		m->nvlink.switched = true;
	peers = ydoc_get(y, nv, "peers");
	if (!peers)
		return 0;
	if (!ydoc_is_seq(peers))
		return ydoc_fail(y, peers, "nvlink.peers", "expected a list");
	for (size_t k = 0; k < ydoc_seq_len(peers); k++)
		if (parse_peer(y, ydoc_seq_at(y, peers, k), k, m))
			return -1;
	return check_totals(y, peers, m);
}
