"""Makes the processes of "host 1" in the two-host rehearsal (tests/process/test_distributed.py) behave as a second
machine would. On one machine both msruns see the master address (127.0.0.1) as their own, so both start a
scheduler and one of them fails on the taken port; on two machines only host 0 owns that address. Here msrun's
check "is the master address one of mine?" answers no, so host 1 starts no scheduler and its workers join host
0's, over TCP, as on a second machine. Nothing else is changed. Python imports this file at start-up for every
process whose PYTHONPATH begins with this folder (the test sets that for host 1 only)."""
import importlib.abc
import sys

TARGET = "mindspore.parallel.cluster.process_entity._api"


class _NotTheMaster(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path, target=None):
        if name != TARGET:
            return None
        sys.meta_path.remove(self)
        import importlib.util
        spec = importlib.util.find_spec(name)
        original = spec.loader.exec_module

        def exec_module(module):
            original(module)
            module._is_local_ip = lambda ip_address: False  # the master is another machine

        spec.loader.exec_module = exec_module
        return spec


sys.meta_path.insert(0, _NotTheMaster())
