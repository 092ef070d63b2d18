/* The forms of nvidia-smi the look-alike answers, each on GPUs already
 * found (smi.c parses the options, loads NVML and picks the GPUs). Each
 * returns an exit status. */
#ifndef NVM_SMI_FORMS_H
#define NVM_SMI_FORMS_H

#include "smi/api.h"

/* nvidia-smi with no option (table.c). */
int smi_table(const struct smi_api *api, const struct smi_gpu *gpus, unsigned n);
/* -q (query.c). */
int smi_query(const struct smi_api *api, const struct smi_gpu *gpus, unsigned n);
/* topo -m (topo.c). */
int smi_topo(const struct smi_api *api, const struct smi_gpu *gpus, unsigned n);

/* --query-gpu and --query-compute-apps with --format=csv (csv.c): the
 * fields are checked before NVML is loaded, so a bad one costs nothing. */
struct smi_csv {
	bool apps;              /* --query-compute-apps, else --query-gpu */
	bool header;
	unsigned nfields;
	int fields[64];
};
/* Parses "a,b,c" into c; -1 with the unknown name in bad. */
int smi_csv_parse(struct smi_csv *c, const char *list, char *bad, size_t len);
/* The names a list may hold, for messages. */
const char *smi_csv_names(bool apps);
int smi_csv(const struct smi_api *api, const struct smi_csv *c, const struct smi_gpu *gpus,
	    unsigned n, unsigned total);

#endif
