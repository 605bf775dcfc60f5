#!/usr/bin/env python3
"""Writes the small allocator-snapshot fixtures used by src/snapshot tests.

The dicts follow the layout of torch.cuda.memory._snapshot(); the expected numbers in the
tests were worked out by hand from the events below (see snapshot_fixture_test.cc).
Run from this directory: python3 make_fixtures.py
"""
import gzip
import pickle

MiB = 1 << 20
UNWIND = {'name': 'torch::unwind::unwind()', 'filename': '??', 'line': 0}
MALLOC = {'name': 'c10::cuda::CUDACachingAllocator::Native::DeviceCachingAllocator::malloc',
          'filename': 'CUDACachingAllocator.cpp', 'line': 0}
CALL_IMPL = {'name': '_call_impl',
             'filename': '/usr/lib/python3/site-packages/torch/nn/modules/module.py', 'line': 1750}
MAIN = {'name': '<module>', 'filename': '/home/u/proj/train.py', 'line': 99}


def stack(name, filename, line):
    return [UNWIND, MALLOC, {'name': name, 'filename': filename, 'line': line}, CALL_IMPL, MAIN]


WEIGHTS = stack('make_weights', '/home/u/proj/train.py', 10)
FWD = stack('forward', '/home/u/proj/model.py', 20)
ACT2 = stack('forward', '/home/u/proj/model.py', 30)
LOAD = stack('load', '/home/u/proj/data.py', 5)


def block(address, size, requested, state, frames):
    return {'address': address, 'size': size, 'requested_size': requested, 'state': state,
            'frames': frames}


def segment(device, address, total, blocks, expandable=False, seg_type='large'):
    active = [b for b in blocks if b['state'].startswith('active')]
    return {'device': device, 'address': address, 'total_size': total,
            'allocated_size': sum(b['size'] for b in blocks if b['state'] == 'active_allocated'),
            'active_size': sum(b['size'] for b in active),
            'requested_size': sum(b['requested_size'] for b in active),
            'stream': 0, 'segment_type': seg_type, 'segment_pool_id': (0, 0),
            'is_expandable': expandable, 'frames': [], 'blocks': blocks}


def ev(action, addr, size, t, frames=None, **extra):
    e = {'action': action, 'addr': addr, 'size': size, 'stream': 0, 'time_us': t}
    if frames is not None:
        e['frames'] = frames
    e.update(extra)
    return e


A, B, C = 0x100000, 0x1000000, 0x4000000
segments = [
    segment(0, A, 4 * MiB, [block(A, MiB, 1000000, 'active_allocated', WEIGHTS),
                            block(A + MiB, MiB, MiB, 'inactive', []),
                            block(A + 2 * MiB, 2 * MiB, 2000000, 'active_pending_free', FWD)]),
    segment(0, B, 2 * MiB, [block(B, 2 * MiB, 2 * MiB, 'inactive', [])]),
    segment(0, C, MiB, [block(C, 512 * 1024, 500000, 'active_allocated', LOAD),
                        block(C + 512 * 1024, 512 * 1024, 512 * 1024, 'inactive', [])],
            seg_type='small'),
    segment(1, 0x8000000, MiB, [block(0x8000000, MiB, MiB, 'active_allocated', [])]),
]
trace0 = [
    ev('segment_alloc', A, 4 * MiB, 1000),
    ev('alloc', A, 1000000, 1100, WEIGHTS),
    ev('alloc', A + MiB, MiB, 1200, ACT2),
    ev('segment_alloc', B, 2 * MiB, 1300),
    ev('alloc', B, 2000000, 1400, ACT2),
    ev('free_requested', A + MiB, MiB, 1500),
    ev('free_completed', A + MiB, MiB, 1600),
    ev('alloc', A + 2 * MiB, 2000000, 1700, FWD),
    ev('free_completed', B, 2000000, 1800),
    ev('oom', 0, 8 * MiB, 1900, FWD, device_free=MiB),
    ev('free_requested', A + 2 * MiB, 2000000, 2000),
    ev('free_completed', C + 512 * 1024, 400000, 2100),
    ev('segment_map', 0x2000000, 2 * MiB, 2200),
    ev('segment_unmap', 0x2000000, 2 * MiB, 2300),
    ev('segment_alloc', 0x3000000, MiB, 2400),
    ev('segment_free', 0x3000000, MiB, 2500),
]
snapshot = {'segments': segments, 'device_traces': [trace0, []],
            'allocator_settings': {'PYTORCH_CUDA_ALLOC_CONF': 'expandable_segments:True',
                                   'max_split_size': -1}}

with open('two_devices_oom.pickle', 'wb') as f:
    pickle.dump(snapshot, f, protocol=5)
with gzip.open('two_devices_oom.pickle.gz', 'wb') as f:
    f.write(pickle.dumps(snapshot, protocol=2))
# Segments only, no trace (what _snapshot() gives without _record_memory_history), protocol 0.
with open('state_only_p0.pickle', 'wb') as f:
    pickle.dump({'segments': segments[:2]}, f, protocol=0)
