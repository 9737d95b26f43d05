"""Resolve a validated Spec into a Plan: plain data the templates lay out, all decisions made."""

from envkit.plan.build import HostFacts, Plan, make_plan

__all__ = ["HostFacts", "Plan", "make_plan"]
