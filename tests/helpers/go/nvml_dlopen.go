// nvml_dlopen: loads NVML as NVIDIA's Go bindings (go-nvml) do, through
// cgo and dlopen("libnvidia-ml.so.1") by name, and prints what it says:
// "N GPUs: NAME, NAME...", or why it could not.
package main

/*
#cgo LDFLAGS: -ldl
#include <dlfcn.h>
#include <stdlib.h>

typedef int (*init_fn)(void);
typedef int (*count_fn)(unsigned *);
typedef int (*handle_fn)(unsigned, void **);
typedef int (*name_fn)(void *, char *, unsigned);

static int call_init(void *f) { return ((init_fn)f)(); }
static int call_count(void *f, unsigned *n) { return ((count_fn)f)(n); }
static int call_handle(void *f, unsigned i, void **d) { return ((handle_fn)f)(i, d); }
static int call_name(void *f, void *d, char *s, unsigned n) { return ((name_fn)f)(d, s, n); }
*/
import "C"

import (
	"fmt"
	"os"
	"strings"
	"unsafe"
)

func sym(h unsafe.Pointer, name string) unsafe.Pointer {
	s := C.CString(name)
	defer C.free(unsafe.Pointer(s))
	return C.dlsym(h, s)
}

func main() {
	lib := C.CString("libnvidia-ml.so.1")
	defer C.free(unsafe.Pointer(lib))
	h := C.dlopen(lib, C.RTLD_NOW)
	if h == nil {
		fmt.Println("dlopen:", C.GoString(C.dlerror()))
		os.Exit(1)
	}
	if r := C.call_init(sym(h, "nvmlInit_v2")); r != 0 {
		fmt.Println("nvmlInit_v2:", r)
		os.Exit(1)
	}
	var n C.uint
	C.call_count(sym(h, "nvmlDeviceGetCount_v2"), &n)
	names := []string{}
	buf := (*C.char)(C.malloc(96))
	defer C.free(unsafe.Pointer(buf))
	for i := C.uint(0); i < n; i++ {
		var d unsafe.Pointer
		if C.call_handle(sym(h, "nvmlDeviceGetHandleByIndex_v2"), i, &d) != 0 ||
			C.call_name(sym(h, "nvmlDeviceGetName"), d, buf, 96) != 0 {
			continue
		}
		names = append(names, C.GoString(buf))
	}
	fmt.Printf("%d GPUs: %s\n", n, strings.Join(names, ", "))
}
