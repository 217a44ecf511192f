"""Runs Megatron-LM's own argument check on a script written by `pipescope export megatron`.

    PYTHONPATH=/path/to/Megatron-LM python tests/megatron/check_args.py EXPORT.sh... [--device-arch N]

Runs the script in bash with `torchrun` replaced by a function that reports its arguments
and CUDA_DEVICE_MAX_CONNECTIONS; sets WORLD_SIZE to `nproc_per_node x nnodes` (RANK 0);
then runs what `pretrain_gpt.py` runs before it touches a GPU: `parse_args`, `validate_args`
and the `TransformerConfig` built from the arguments (whose constructor checks the pipeline
layout and the recomputation settings). The GPU's architecture (8 Ampere, 9 Hopper, 10
Blackwell), which `validate_args` reads from the first CUDA device, is `--device-arch`
(default 9), so the check runs on a machine without a GPU; without Transformer Engine (a CPU
machine) the RoPE fusion, which needs it, is turned off before the config is built. Prints
one line per script, `ok` with what Megatron derived or `refused` with Megatron's own
message, and exits 1 when any is refused.
"""

import contextlib
import io
import os
import subprocess
import sys


def read_script(path):
    """The launcher's and the training script's arguments and the exported environment,
    read by running the script in bash with `torchrun` replaced by a function that prints
    them."""
    stub = (
        'torchrun() { printf "%s\\0" "${CUDA_DEVICE_MAX_CONNECTIONS-<unset>}" "$@"; }; '
        'source "$1"'
    )
    # The script alone decides the variable: not the caller's, nor an earlier script's (this
    # process sets it for the check it runs).
    clean = {k: v for k, v in os.environ.items() if k != "CUDA_DEVICE_MAX_CONNECTIONS"}
    run = subprocess.run(
        ["bash", "-c", stub, "check", path], capture_output=True, text=True, env=clean
    )
    if run.returncode != 0:
        raise SystemExit(f"{path}: bash failed: {run.stderr}")
    words = run.stdout.split("\0")[:-1]
    if len(words) < 2:
        raise SystemExit(f"{path}: the script does not run torchrun")
    env = {} if words[0] == "<unset>" else {"CUDA_DEVICE_MAX_CONNECTIONS": words[0]}
    words = words[1:]
    script = next(i for i, w in enumerate(words) if w.endswith(".py"))
    launcher = words[:script]
    nproc = int(launcher[launcher.index("--nproc_per_node") + 1])
    nnodes = int(launcher[launcher.index("--nnodes") + 1])
    return env, nproc * nnodes, words[script], words[script + 1:]


def transformer_engine_imports():
    try:
        import transformer_engine  # noqa: F401
    except ImportError:
        return False
    return True


def check(path, arch):
    """Megatron's check of one script: a line saying what Megatron derived, or raises."""
    import megatron.training.arguments as arguments
    from megatron.training.argument_utils import core_transformer_config_from_args

    env, world, script, args = read_script(path)
    os.environ.pop("CUDA_DEVICE_MAX_CONNECTIONS", None)
    os.environ.update(env)
    os.environ["WORLD_SIZE"] = str(world)
    os.environ["RANK"] = "0"
    arguments.get_device_arch_version = lambda: arch
    sys.argv = [script] + args
    # Megatron prints every argument; keep that for a failure only.
    log = io.StringIO()
    try:
        with contextlib.redirect_stdout(log), contextlib.redirect_stderr(log):
            parsed = arguments.parse_args()
            arguments.validate_args(parsed, {})
            if not transformer_engine_imports():
                # A machine without Transformer Engine (a CPU one) cannot build the
                # config with the fusions that need it; the GPU machine has it.
                parsed.apply_rope_fusion = False
            config = core_transformer_config_from_args(parsed)
    except BaseException:
        sys.stderr.write(log.getvalue()[-4000:])
        raise
    return (
        f"world {world}, tp {parsed.tensor_model_parallel_size}, "
        f"pp {parsed.pipeline_model_parallel_size}, dp {parsed.data_parallel_size}, "
        f"vpp {parsed.virtual_pipeline_model_parallel_size}, "
        f"layout {config.pipeline_model_parallel_layout}, "
        f"recompute {config.recompute_granularity} {config.recompute_method} "
        f"{config.recompute_num_layers} {config.recompute_modules}"
    )


def main():
    argv = sys.argv[1:]
    arch = 9
    if "--device-arch" in argv:
        i = argv.index("--device-arch")
        arch = int(argv[i + 1])
        del argv[i:i + 2]
    if not argv:
        raise SystemExit(__doc__)
    failed = 0
    for path in argv:
        try:
            print(f"ok {path}: {check(path, arch)}", flush=True)
        except (AssertionError, ValueError, RuntimeError, SystemExit) as e:
            failed += 1
            print(f"refused {path}: {type(e).__name__}: {e}", flush=True)
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
