#!/usr/bin/python3
# Run: /usr/bin/python3 torch-mlp.py torch-mlp.json torch-mlp.self.tsv (Debian's python3-torch, CPU), then gzip -9n.
# Makes tests/data/traces/torch-mlp.json.gz: a PyTorch profiler Chrome trace of a
# small MLP's training steps (forward, backward through autograd, SGD), and
# torch-mlp.self.tsv: torch's own per-op count, self and total CPU time.
import gzip, json, sys, torch
from torch.profiler import profile, ProfilerActivity
torch.manual_seed(0)
torch.set_num_threads(1)
model = torch.nn.Sequential(torch.nn.Linear(64, 128), torch.nn.ReLU(), torch.nn.Linear(128, 10))
opt = torch.optim.SGD(model.parameters(), lr=0.01)
x, y = torch.randn(32, 64), torch.randint(0, 10, (32,))
def step():
    opt.zero_grad()
    loss = torch.nn.functional.cross_entropy(model(x), y)
    loss.backward()
    opt.step()
step()
with profile(activities=[ProfilerActivity.CPU]) as prof:
    for _ in range(3):
        step()
prof.export_chrome_trace(sys.argv[1])
with open(sys.argv[2], "w") as f:
    f.write("# name\tcount\tself_us\ttotal_us (torch's key_averages)\n")
    for e in sorted(prof.key_averages(), key=lambda e: -e.self_cpu_time_total):
        f.write("%s\t%d\t%.3f\t%.3f\n" % (e.key, e.count, e.self_cpu_time_total, e.cpu_time_total))
