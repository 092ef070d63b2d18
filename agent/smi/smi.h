/* nvmirage's nvidia-smi look-alike, on nvmirage's NVML: `nvmirage smi`,
 * and the nvidia-smi the tree delivers into every target (nvidia-smi.c). */
#ifndef NVM_SMI_H
#define NVM_SMI_H

/* Runs it with argv (argv[0] names it in its messages). Returns an exit
 * status: nvidia-smi's own where it has one, 2 for a form it does not
 * answer. */
int smi_main(int argc, char **argv);

#endif
