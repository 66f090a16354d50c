"""How each language family's source is read: its functions, data flow and blanked text, behind one
protocol (shapes.py) every lens shares."""
