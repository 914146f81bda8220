"""Playing against the AI: the service behind the web page (``pasur serve``) and the terminal game
(``pasur play --hidden``): games and matches, the player's view built from their information state
only, AI moves, hints, and the open-hand replay (see ``docs/web.md``)."""
