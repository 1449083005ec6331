import React from "react";

/** Props of a button. */
export interface ButtonProps {
  label: string;
  onClick: () => void;
}

/** A button that shows its label. */
export function Button({ label, onClick }: ButtonProps) {
  return <button onClick={onClick}>{label}</button>;
}
