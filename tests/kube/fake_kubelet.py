#!/usr/bin/python3
"""A stand-in for the kubelet's PodResources v1 gRPC service on a unix socket.

Real gRPC (grpcio) and real protobuf encoding, from the same .proto the
agent is built with. The pods it lists are read from a JSON file on every
call, so a test changes the node by rewriting that file:

  {"pods": [{"namespace": "slurm", "name": "slurm-worker-0",
             "containers": [{"name": "slurmd",
                             "devices": [{"resource_name": "nvidia.com/gpu",
                                          "device_ids": ["0", "1"]}]}]}]}

usage: fake_kubelet.py PROTO SOCKET PODS.json
"""
import json
import os
import signal
import sys
import tempfile
from concurrent import futures

import grpc
from grpc_tools import protoc


def load_api(proto):
    out = tempfile.mkdtemp(prefix="fake-kubelet-")
    rc = protoc.main(["protoc", "-I" + os.path.dirname(proto), "--python_out=" + out,
                      "--grpc_python_out=" + out, proto])
    if rc:
        sys.exit("protoc failed on %s" % proto)
    sys.path.insert(0, out)
    import podresources_pb2
    import podresources_pb2_grpc
    return podresources_pb2, podresources_pb2_grpc


def main():
    proto, sock, pods_file = sys.argv[1:4]
    pb, pb_grpc = load_api(os.path.abspath(proto))

    class Lister(pb_grpc.PodResourcesListerServicer):
        def List(self, request, context):
            with open(pods_file) as f:
                state = json.load(f)
            resp = pb.ListPodResourcesResponse()
            for p in state.get("pods", []):
                pr = resp.pod_resources.add(name=p["name"], namespace=p["namespace"])
                for c in p.get("containers", []):
                    cr = pr.containers.add(name=c["name"])
                    for d in c.get("devices", []):
                        cd = cr.devices.add(resource_name=d["resource_name"])
                        cd.device_ids.extend(d["device_ids"])
                        cd.topology.nodes.add(ID=0)
                    cr.cpu_ids.extend(c.get("cpu_ids", []))
            return resp

    server = grpc.server(futures.ThreadPoolExecutor(max_workers=2))
    pb_grpc.add_PodResourcesListerServicer_to_server(Lister(), server)
    if os.path.exists(sock):
        os.unlink(sock)
    server.add_insecure_port("unix://" + sock)
    server.start()
    print("fake kubelet serving on", sock, flush=True)
    signal.signal(signal.SIGTERM, lambda *a: server.stop(0))
    server.wait_for_termination()


if __name__ == "__main__":
    main()
