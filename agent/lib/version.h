#ifndef NVM_VERSION_H
#define NVM_VERSION_H
#define NVM_VERSION "0.2.0"
#endif
