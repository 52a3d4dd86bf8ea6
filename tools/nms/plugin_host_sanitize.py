"""nms's cases for tools/plugin_host_sanitize.py: the IPluginV3 creators TwinopsNMS and
TwinopsBatchedNMS (int64 and int32 classes) at box counts on either side of a 64-box word,
clustered boxes so that many suppress each other, tied scores; keep's length comes from the
plugin's size tensor. TwinopsBatchedNMSPadded (every interface the library has) on 3 images,
shared and per-class boxes, class-aware and class-agnostic, with and without a top-k; the
EfficientNMS_TRT and TRTBatchedNMS drop-ins against their rules (efficient_nms_reference,
trt_batched_nms_reference).
"""
import torch

from twinops import plugin_host as ph
from twinops.library.nms.reference import efficient_nms_reference, trt_batched_nms_reference


def _padded_cases(g: torch.Generator, dtype: torch.dtype, check) -> None:
    host = ph.get_host()
    if dtype == torch.bfloat16 and host.trt_major < 9:
        return  # TensorRT 8.6 has no bfloat16
    interfaces = ("v3", "v2") if host.trt_major >= 10 else ("v2",)
    for box_shape in ((3, 150, 4), (3, 150, 2, 4)):
        xy = torch.rand(*box_shape[:-1], 2, device=g.device, generator=g) * 60
        boxes = torch.cat([xy, xy + torch.rand(*box_shape[:-1], 2, device=g.device, generator=g) * 30 + 1], -1)
        scores = (torch.rand(3, 150, 2, device=g.device, generator=g) * 8).round() / 8  # ties
        boxes, scores = boxes.to(dtype), scores.to(dtype)
        for attrs in ({"pre_nms_top_k": -1, "class_agnostic": 0, "max_output_boxes": 40},
                      {"pre_nms_top_k": 70, "class_agnostic": 1, "max_output_boxes": 5}):
            attrs = {"score_threshold": 0.2, "iou_threshold": 0.5, **attrs}
            want = torch.ops.twinops.batched_nms_padded(
                boxes, scores, attrs["score_threshold"], attrs["iou_threshold"], attrs["max_output_boxes"],
                attrs["pre_nms_top_k"], bool(attrs["class_agnostic"]))
            for interface in interfaces:
                got = ph.run_plugin(("TwinopsBatchedNMSPadded", attrs), [boxes, scores], interface=interface)
                for name, y, w in zip(("num", "boxes", "scores", "classes", "indices"), got, want):
                    check(f"TwinopsBatchedNMSPadded {interface} {tuple(box_shape)} {attrs} {dtype} {name}",
                          y.to(w.dtype), w)


def _efficient_cases(g: torch.Generator, dtype: torch.dtype, check) -> None:
    host = ph.get_host()
    if dtype == torch.bfloat16 and host.trt_major < 9:
        return  # TensorRT 8.6 has no bfloat16
    interfaces = ("v3", "v2") if host.trt_major >= 10 else ("v2",)
    xy = torch.rand(2, 120, 2, device=g.device, generator=g) * 60
    boxes = torch.cat([xy, xy + torch.rand(2, 120, 2, device=g.device, generator=g) * 30 + 1], -1).to(dtype)
    scores = ((torch.rand(2, 120, 3, device=g.device, generator=g) * 8).round() / 8).to(dtype)
    for attrs in ({"class_agnostic": 0, "background_class": -1}, {"class_agnostic": 1, "background_class": 0}):
        attrs = {"score_threshold": 0.25, "iou_threshold": 0.5, "max_output_boxes": 30, "score_activation": 0,
                 "box_coding": 0, **attrs}
        want = efficient_nms_reference(boxes.float().cpu(), scores.float().cpu(),
                                       **{k: bool(v) if k == "class_agnostic" else v for k, v in attrs.items()})
        for interface in interfaces:
            node = ph.attributes_node("EfficientNMS_TRT", {**attrs, "plugin_namespace": "twinops"})
            got = ph.run_plugin(node, [boxes, scores], interface=interface)
            for name, y, w in zip(("num", "boxes", "scores", "classes"), got, want):
                check(f"EfficientNMS_TRT {interface} {attrs} {dtype} {name}", y.float().cpu(), w.to(y.dtype).float())


def _trt_batched_cases(g: torch.Generator, dtype: torch.dtype, check) -> None:
    host = ph.get_host()
    if dtype == torch.bfloat16 and host.trt_major < 9:
        return  # TensorRT 8.6 has no bfloat16
    interfaces = ("v3", "v2") if host.trt_major >= 10 else ("v2",)
    for per_class in (False, True):
        k = 3 if per_class else 1
        xy = torch.rand(2, 100, k, 2, device=g.device, generator=g) * 0.8
        boxes = torch.cat([xy, xy + torch.rand(2, 100, k, 2, device=g.device, generator=g) * 0.4], -1).to(dtype)
        scores = ((torch.rand(2, 100, 3, device=g.device, generator=g) * 8).round() / 8).to(dtype)
        attrs = {"background_label_id": 1, "num_classes": 3, "topk": 30, "keep_topk": 40, "score_threshold": 0.2,
                 "iou_threshold": 0.5, "is_normalized": 1, "clip_boxes": 1, "return_index": 1}
        want = trt_batched_nms_reference(boxes.float().cpu(), scores.float().cpu(), 1, 3, 30, 40, 0.2, 0.5,
                                         clip_boxes=True, return_index=True)
        for interface in interfaces:
            got = ph.run_plugin(("TRTBatchedNMS", attrs), [boxes, scores], interface=interface)
            for name, y, w in zip(("dets", "labels", "index"), got, want):
                check(f"TRTBatchedNMS {interface} per_class={per_class} {dtype} {name}", y.float().cpu(),
                      w.to(y.dtype).float())


def cases(g: torch.Generator, dtype: torch.dtype, check) -> None:
    """Runs nms's plugins in ``dtype`` on g's device; ``check(what, got, want)`` each."""
    _padded_cases(g, dtype, check)
    _efficient_cases(g, dtype, check)
    _trt_batched_cases(g, dtype, check)
    if ph.get_host().trt_major < 10:
        return  # TwinopsNMS / TwinopsBatchedNMS need a size tensor: IPluginV3 only
    for k in (1, 63, 64, 65, 300):
        xy = torch.rand(k, 2, device=g.device, generator=g) * 60
        wh = torch.rand(k, 2, device=g.device, generator=g) * 30 + 1
        boxes = torch.cat([xy, xy + wh], 1).to(dtype)
        scores = (torch.rand(k, device=g.device, generator=g) * 8).round().to(dtype)  # ties
        idxs = torch.randint(0, 4, (k,), device=g.device, generator=g)
        for threshold in (0.0, 0.5):
            attrs = {"iou_threshold": threshold}
            keep = ph.run_plugin(("TwinopsNMS", attrs), [boxes, scores])[0]
            check(f"TwinopsNMS K={k} iou={threshold} {dtype}", keep, torch.ops.twinops.nms(boxes, scores, threshold))
            want = torch.ops.twinops.batched_nms(boxes, scores, idxs, threshold)
            for classes in (idxs, idxs.int()):
                keep = ph.run_plugin(("TwinopsBatchedNMS", attrs), [boxes, scores, classes])[0]
                check(f"TwinopsBatchedNMS K={k} iou={threshold} {dtype} {classes.dtype}", keep, want)
