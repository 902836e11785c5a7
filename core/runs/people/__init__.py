"""What people do to runs: who may do what (permissions), the one door for actions, tags and notes, and a
person's own handwriting with the fine-tune it feeds."""
