// ls_gpus: lists /proc/driver/nvidia/gpus and reads each GPU's model, in
// pure Go (built with CGO_ENABLED=0: a static binary whose runtime makes
// its own system calls, no C library).
package main

import (
	"fmt"
	"os"
	"strings"
)

func main() {
	dir := "/proc/driver/nvidia/gpus"
	entries, err := os.ReadDir(dir)
	if err != nil {
		fmt.Println(err)
		os.Exit(1)
	}
	for _, e := range entries {
		info, err := os.ReadFile(dir + "/" + e.Name() + "/information")
		model := "?"
		if err == nil {
			for _, line := range strings.Split(string(info), "\n") {
				if strings.HasPrefix(line, "Model:") {
					model = strings.TrimSpace(strings.TrimPrefix(line, "Model:"))
				}
			}
		}
		fmt.Printf("%s %s\n", e.Name(), model)
	}
}
