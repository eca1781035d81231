export interface GpuContext { device: GPUDevice; adapterName: string; software: boolean; timestamps: boolean }
