"""Resolve a validated Spec into a Plan: plain data the templates lay out, all decisions made.

May import: config, checks, catalog, runtime, addresses, files, names, platforms, errors."""

from envkit.plan.build import make_plan
from envkit.plan.models.plan import HostFacts, Plan

__all__ = ["HostFacts", "Plan", "make_plan"]
