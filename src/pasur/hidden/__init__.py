"""The hidden-hand game of Pasur: what a player sees, worlds consistent with it, agents that play
from it, and an arena that measures them (see ``docs/hidden.md``)."""
